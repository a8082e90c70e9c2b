package workspace

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockScopeABI is the first Landlock ABI that scopes signals.
const landlockScopeABI = 6

// signalScope is a Landlock domain that restricts nothing but signals
// (and ptrace, which every domain restricts): a process in it cannot
// signal or trace one outside. An unsandboxed command keeps its files,
// network and capabilities, but cannot kill its launcher, the subreaper
// that finds whatever it leaves behind.
var signalScope = landlock.Config{Scoped: ll.ScopeSignal}

// startScoped starts argv in its own signal scope, from a thread that
// takes the domain on and is then thrown away with its goroutine.
func startScoped(argv []string, attr *os.ProcAttr) (*os.Process, error) {
	type started struct {
		p   *os.Process
		err error
	}
	done := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := enterSignalScope(); err != nil {
			done <- started{nil, err}
			return
		}
		p, err := os.StartProcess(argv[0], argv, attr)
		done <- started{p, err}
	}()
	s := <-done
	return s.p, s.err
}

func enterSignalScope() error {
	// Without CAP_SYS_ADMIN the kernel takes a domain only with no_new_privs.
	if !hasCapability(unix.CAP_SYS_ADMIN) {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
	}
	fd, flags, err := signalScope.NewRulesetFD()
	if err != nil {
		return fmt.Errorf("building the landlock signal scope: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock cannot scope signals here")
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// hasCapability reports whether this thread's effective set holds c.
func hasCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}

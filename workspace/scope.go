package workspace

import (
	"errors"
	"fmt"
	"os"

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

// startScoped starts an unconfined command (startRestricted) with the
// seccomp filter of every command and, when scoped, in its own signal
// scope.
func startScoped(scoped bool, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return startRestricted(func() error { return enterCommandScope(scoped) }, argv, attr)
}

func enterCommandScope(scoped bool) error {
	// Without CAP_SYS_ADMIN the kernel takes a filter or a domain only with
	// no_new_privs.
	if !hasCapability(unix.CAP_SYS_ADMIN) {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
	}
	if err := commandPolicy().install(); err != nil && !errors.Is(err, errNoSeccomp) {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	if !scoped {
		return nil
	}
	return enterDomain(signalScope)
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

package workspace

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// confinement is plan mode's kernel guarantee where bwrap does not run:
// a Landlock domain that may read the view and write only a scratch
// directory and /dev/null, with TCP connect/bind denied (ABI >= 4) and
// signals and abstract sockets scoped to the domain (ABI >= 6), and a
// seccomp filter for the metadata Landlock leaves open (seccomp.go). The
// command also loses every capability and gets no_new_privs, root or not.
type confinement struct {
	Landlock   bool     // false: the kernel has none; capabilities and no_new_privs only
	ReadDirs   []string // read, list, execute
	ReadFiles  []string
	WriteDirs  []string // the command's scratch /tmp
	WriteFiles []string // /dev/null
	Exec       bool     // execution mode: the workspace and home are WriteDirs, chmod and the like allowed
	Network    bool     // with Exec: TCP is not restricted (a setup command)
}

// landlockConfig restricts everything go-landlock knows, degrading to what
// the kernel supports (unix sockets from ABI 9, UDP from ABI 10).
var landlockConfig = landlock.V11.BestEffort()

// landlockNetworkConfig is landlockConfig without the network restrictions.
var landlockNetworkConfig = func() landlock.Config {
	c := landlock.V11
	c.HandledAccessNet = 0
	return c.BestEffort()
}()

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// startConfined starts the command with c's restrictions (startRestricted).
func startConfined(c *confinement, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return startRestricted(c.applyToThread, argv, attr)
}

// startRestricted restricts one locked OS thread with restrict and starts
// the command from it, so only the command carries the restrictions: the
// launcher's other threads, the thread group leader among them, stay
// outside the Landlock domain, which the command therefore cannot signal
// or ptrace. The thread is never unlocked, so the Go runtime ends it with
// the goroutine.
func startRestricted(restrict func() error, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	type started struct {
		p   *os.Process
		err error
	}
	done := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		if err := restrict(); err != nil {
			done <- started{nil, err}
			return
		}
		p, err := os.StartProcess(argv[0], argv, attr)
		done <- started{p, err}
	}()
	s := <-done
	return s.p, s.err
}

func (c *confinement) applyToThread() error {
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("dropping capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	policy, cfg := planPolicy(), landlockConfig
	if c.Exec {
		policy = execPolicy()
		if c.Network {
			cfg = landlockNetworkConfig
		}
	}
	if err := policy.install(); err != nil && !errors.Is(err, errNoSeccomp) {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	if !c.Landlock {
		return nil
	}
	if landlockABI() < 1 {
		return errors.New("landlock is not available")
	}
	return enterDomain(cfg, c.rules()...)
}

// enterDomain puts this thread in a new Landlock domain of cfg and rules.
func enterDomain(cfg landlock.Config, rules ...landlock.Rule) error {
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock cannot enforce this ruleset here")
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

func (c *confinement) rules() []landlock.Rule {
	return []landlock.Rule{
		landlock.RODirs(c.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(c.ReadFiles...).IgnoreIfMissing(),
		landlock.RWDirs(c.WriteDirs...).WithRefer(),
		landlock.RWFiles(c.WriteFiles...).IgnoreIfMissing(),
	}
}

// dropCapabilities empties this thread's bounding, ambient, effective,
// permitted and inheritable sets, if it holds any capability: root without
// capabilities cannot mount, chown, ptrace, load modules or reboot, and with
// no_new_privs cannot gain them back through a setuid program.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[0].Permitted == 0 && data[1].Permitted == 0 && os.Geteuid() != 0 {
		return nil // nothing to drop, and no right to touch the bounding set
	}
	for c := 0; c <= lastCapability(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient set: %w", err)
	}
	data = [2]unix.CapUserData{}
	return unix.Capset(&hdr, &data[0])
}

func lastCapability() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
}

package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// readableDevices are the device files a plan-mode command may read under
// Landlock; /dev/null may also be written.
var readableDevices = []string{"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// confinement builds plan mode's Landlock rules from the view: the same
// directories bwrap would show, minus the hidden ones and the secret files
// (Landlock allows, it cannot subtract: a directory holding one is allowed
// entry by entry), plus /proc (Landlock already denies the files of
// processes outside the domain, h9's among them) and the scratch /tmp.
func (s *sandbox) confinement(p place, scratch string) *confinement {
	c := &confinement{
		ReadDirs:   []string{"/proc", p.dir, p.home},
		ReadFiles:  readableDevices,
		WriteDirs:  []string{scratch},
		WriteFiles: []string{os.DevNull},
	}
	for _, r := range s.view.roots() {
		dirs, files := allowBelow(r, s.view.excludedUnder(r))
		c.ReadDirs = append(c.ReadDirs, dirs...)
		c.ReadFiles = append(c.ReadFiles, files...)
	}
	return c
}

// allowBelow lists the directories and files to allow so that everything
// under root is reachable except the excluded paths. Symlinks get no rule:
// Landlock judges the file they lead to.
func allowBelow(root string, excluded []string) (dirs, files []string) {
	if len(excluded) == 0 {
		return []string{root}, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		var below []string
		skip := false
		for _, x := range excluded {
			switch {
			case x == p:
				skip = true
			case within(x, p):
				below = append(below, x)
			}
		}
		switch {
		case skip:
		case len(below) > 0:
			d, f := allowBelow(p, below)
			dirs, files = append(dirs, d...), append(files, f...)
		case e.IsDir():
			dirs = append(dirs, p)
		case e.Type().IsRegular():
			files = append(files, p)
		}
	}
	return dirs, files
}

// execConfinement is the Landlock execution mode's (H9_SANDBOX=auto
// without bwrap): plan mode's view, and writes to the session's workspace
// and home besides the scratch /tmp. Everything else of the data
// directory, other sessions' workspaces among them, is neither readable
// nor writable. TCP is refused unless p asks for the network (a setup
// command); signals and abstract unix sockets are scoped to the command.
func (s *sandbox) execConfinement(p place, scratch string) *confinement {
	c := s.confinement(p, scratch)
	c.Landlock, c.Exec, c.Network = true, true, p.network
	read := c.ReadDirs[:0:0]
	for _, d := range c.ReadDirs {
		if d != p.dir && d != p.home {
			read = append(read, d)
		}
	}
	c.ReadDirs = read
	c.WriteDirs = append(c.WriteDirs, p.dir, p.home)
	return c
}

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

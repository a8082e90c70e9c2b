package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// probeTimeout bounds the one-off sandbox checks at start.
const probeTimeout = 20 * time.Second

// sandbox is how bash commands are started.
type sandbox struct {
	level     Level
	bwrap     string // path to bwrap when level is LevelBwrap
	bash      string // path to bash (the same inside the sandbox: /usr is shown)
	view      view
	limits    Limits
	cgroups   *cgroupBase // nil: memory and process limits are not enforced
	cgroupWhy string      // why cgroups is nil
	landlock  int         // Landlock ABI confining plan mode without bwrap; 0: none
	network   Network     // the way out for sessions with an allow list (network.go); nil: none
	exe       string      // h9's binary, run inside as the network forwarder
	secrets   []Secret    // scrubbed from every command's output, longest first
}

// newSandbox applies H9_SANDBOX: "auto" is bwrap if a trivial command
// runs under it, else the Landlock execution mode if that works, else an
// error naming what is missing; "bwrap" and "landlock" must work; only
// "none" runs commands unsandboxed. Without bwrap, plan mode is confined
// by Landlock when the kernel has it, "none" included.
func newSandbox(mode, probeRoot string, v view, l Limits) (sandbox, string, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return sandbox{}, "", fmt.Errorf("bash is required: %w", err)
	}
	s := sandbox{level: LevelNone, bash: bash, view: v, limits: l}
	if s.cgroups, err = findCgroups(); err != nil {
		s.cgroupWhy = err.Error()
	}
	warning := ""
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case "none":
	case "", "auto", "bwrap", "landlock":
		if err := s.choose(m, probeRoot); err != nil {
			return sandbox{}, "", err
		}
		if s.level == LevelLandlock {
			warning = "bubblewrap is unavailable: bash commands run confined by Landlock (no namespaces); install bubblewrap for the full sandbox"
		}
	default:
		return sandbox{}, "", fmt.Errorf("%w: H9_SANDBOX=%q (want auto, bwrap, landlock or none)", ErrInvalidSandbox, mode)
	}
	if s.level != LevelBwrap {
		s.landlock = s.probeLandlock(probeRoot)
	}
	return s, warning, nil
}

// choose sets the level for auto, bwrap or landlock, or says what is
// missing.
func (s *sandbox) choose(mode, probeRoot string) error {
	var bwrapErr error
	if mode != "landlock" {
		if bwrapErr = s.useBwrap(probeRoot); bwrapErr == nil {
			return nil
		}
		if mode == "bwrap" {
			return fmt.Errorf("%w: H9_SANDBOX=bwrap but %v", ErrSandboxUnavailable, bwrapErr)
		}
	}
	llErr := s.useLandlock(probeRoot)
	switch {
	case llErr == nil:
		return nil
	case mode == "landlock":
		return fmt.Errorf("%w: H9_SANDBOX=landlock but %v", ErrSandboxUnavailable, llErr)
	}
	return fmt.Errorf("%w: H9_SANDBOX=auto found no sandbox: bubblewrap: %v; Landlock: %v "+
		"(install bubblewrap and allow user namespaces, or run on a kernel with Landlock; "+
		"H9_SANDBOX=none runs commands unsandboxed)", ErrSandboxUnavailable, bwrapErr, llErr)
}

// useLandlock runs `true` confined as execution-mode commands are.
func (s *sandbox) useLandlock(probeRoot string) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("the kernel has no Landlock (it needs CONFIG_SECURITY_LANDLOCK and lsm=landlock)")
	}
	try := *s
	try.level, try.landlock = LevelLandlock, abi
	if err := try.probe(probeRoot, false); err != nil {
		return fmt.Errorf("a confined command failed: %v", err)
	}
	s.level, s.landlock = LevelLandlock, abi
	return nil
}

// useBwrap runs `true` exactly as real commands run, so a missing piece
// (namespaces, /proc mount, the launcher, cgroups) shows up now, not
// mid-session.
func (s *sandbox) useBwrap(probeRoot string) error {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("bwrap not found: %w", err)
	}
	try := *s
	try.level, try.bwrap = LevelBwrap, path
	if err := try.probe(probeRoot, false); err != nil {
		return fmt.Errorf("%s failed: %v", path, err)
	}
	s.level, s.bwrap = LevelBwrap, path
	return nil
}

// probeLandlock returns the kernel's Landlock ABI if a plan-mode command
// really runs confined by it here (a seccomp filter may refuse the calls).
func (s *sandbox) probeLandlock(probeRoot string) int {
	abi := landlockABI()
	if abi < 1 {
		return 0
	}
	try := *s
	try.landlock = abi
	if try.probe(probeRoot, true) != nil {
		return 0
	}
	return abi
}

func (s *sandbox) probe(root string, readOnly bool) error {
	dir, err := os.MkdirTemp(root, ".probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p := place{dir: dir, home: dir, readOnly: readOnly}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var out strings.Builder
	oc, err := s.run(ctx, p, "true", probeTimeout, &out, nil)
	if err != nil {
		return err
	}
	if code := exitCode(oc.state); code != 0 {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = fmt.Sprintf("exit code %d", code)
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// job is one prepared bash call and what to undo after it.
type job struct {
	spec    launchSpec // for the launcher; under bwrap Argv is bwrap's
	direct  bool       // bwrap started by h9 itself (bwrap_run.go)
	env     []string
	cgroups *cgroupBase
	cgroup  *cmdCgroup
	scratch string // the command's /tmp when bwrap does not make one
	shared  *sharedMounts
	stdout  io.Writer   // the command's stdout apart from its stderr; nil: both into the output
	seccomp []byte      // under bwrap: the command's seccomp program (bwrap.go)
	stdio   *stdioFiles // a stdio server's stdin and stdout (process_stdio.go); nil for bash
}

func (s *sandbox) prepare(p place, command string) (*job, error) {
	j := &job{spec: launchSpec{Dir: p.dir, FileSize: int64(s.limits.FileSize)}}
	tmp := "/tmp"
	if s.level != LevelBwrap {
		scratch, err := os.MkdirTemp("", "h9-tmp-")
		if err != nil {
			return nil, fmt.Errorf("creating the command's /tmp: %w", err)
		}
		j.scratch, tmp = scratch, scratch
	}
	j.env = append(append(commandEnv(p, tmp), egressEnv(p)...), p.env...)
	argv := egressArgv(p, []string{s.bash, "-c", command})
	switch {
	case s.level == LevelBwrap:
		shared, err := findShared(p.dir)
		if err != nil {
			j.cleanup()
			return nil, fmt.Errorf("checking the workspace's shared objects: %w", err)
		}
		p.shared, j.shared = shared, shared
		j.spec.Argv = append([]string{s.bwrap}, s.bwrapArgs(p, j.env, argv)...)
		j.seccomp = bwrapPolicy(p.readOnly).bytes()
		j.direct = true
	case p.readOnly:
		j.spec.Argv = []string{s.bash, "-c", guardPlanGit(command)}
		j.spec.Confine = s.confinement(p, j.scratch)
		j.spec.Confine.Landlock = s.landlock > 0
	case s.level == LevelLandlock:
		if err := protectBorrowed(p.dir); err != nil {
			j.cleanup()
			return nil, fmt.Errorf("protecting the workspace's shared objects: %w", err)
		}
		j.spec.Argv = argv
		j.spec.Confine = s.execConfinement(p, j.scratch)
	default:
		j.spec.Argv = argv
		j.spec.ScopeSignals = s.landlock >= landlockScopeABI
	}
	if s.cgroups != nil {
		cg, err := s.cgroups.take(s.limits)
		if err != nil {
			j.cleanup()
			return nil, err
		}
		j.cgroups, j.cgroup, j.spec.Cgroups = s.cgroups, cg, cg.dirs()
	}
	return j, nil
}

func (j *job) cleanup() {
	j.shared.close()
	if j.cgroup != nil {
		j.cgroups.give(j.cgroup)
	}
	if j.scratch != "" {
		os.RemoveAll(j.scratch)
	}
}

// run prepares, runs and cleans up one command.
func (s *sandbox) run(ctx context.Context, p place, command string, timeout time.Duration, out, stdout io.Writer) (outcome, error) {
	j, err := s.prepare(p, command)
	if err != nil {
		return outcome{}, err
	}
	defer j.cleanup()
	j.stdout = stdout
	oc, err := runJob(ctx, j, timeout, out)
	if err == nil && j.cgroup != nil {
		oc.memoryHit, oc.pidsHit = j.cgroup.limitsHit()
	}
	return oc, err
}

// PlanGuard is what keeps plan mode read-only.
type PlanGuard string

const (
	GuardBwrap    PlanGuard = "bwrap"    // the workspace is bound read-only in the sandbox
	GuardLandlock PlanGuard = "landlock" // a Landlock domain, plus the command checker
	GuardChecker  PlanGuard = "checker"  // only commands the checker proves read-only run
)

func (s *sandbox) planGuard() PlanGuard {
	switch {
	case s.level == LevelBwrap:
		return GuardBwrap
	case s.landlock > 0 || s.level == LevelLandlock:
		return GuardLandlock
	}
	return GuardChecker
}

// homeDir is where a session's home lives, next to the workspaces.
func homeDir(root, name string) string { return filepath.Join(root, ".home", name) }

// In plan mode outside bwrap a command the checker accepts still runs git
// in the model's repository, whose configuration (the repository's own,
// the session home's ~/.gitconfig, the template's, anything they include)
// may name programs: an external diff, a textconv or clean filter, a gpg
// program, a pager. planGitGuard, run before the command in the same
// shell, lists every key git would read (git config --list runs nothing)
// and overrides each program-running one through GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n, which win over every file: no program the
// repository names runs. An empty value makes git fail where it would have
// run the program (diff.external: "cannot run"); cat keeps textconv and
// clean filters the identity.
const planGitGuard = `h9_git_guard() { local n=${GIT_CONFIG_COUNT:-0} k v; ` +
	`h9_set() { export "GIT_CONFIG_KEY_$n=$1" "GIT_CONFIG_VALUE_$n=$2"; n=$((n+1)); }; ` +
	`h9_set core.fsmonitor false; h9_set core.hooksPath /dev/null; h9_set core.pager cat; ` +
	`h9_set core.sshCommand false; h9_set core.gitProxy ''; h9_set core.askPass ''; h9_set core.editor false; ` +
	`h9_set sequence.editor false; h9_set core.alternateRefsCommand true; h9_set credential.helper ''; ` +
	`h9_set gpg.program false; h9_set diff.external ''; h9_set log.showSignature false; ` +
	`while IFS= read -r -d '' k; do case "${k,,}" in ` +
	`diff.*.textconv|filter.*.clean|filter.*.smudge) v=cat;; ` +
	`diff.*.command|filter.*.process|credential.*.helper|alias.*) v='';; ` +
	`gpg.*.program|gpg.ssh.defaultkeycommand|merge.*.driver|mergetool.*.cmd|difftool.*.cmd|` +
	`trailer.*.command|trailer.*.cmd|browser.*.cmd|man.*.cmd|man.*.path|pager.*) v=false;; ` +
	`*) continue;; esac; ` +
	`h9_set "$k" "$v"; done < <(git config --list --name-only -z 2>/dev/null); ` +
	`export GIT_CONFIG_COUNT=$n; unset -f h9_set; }; h9_git_guard; unset -f h9_git_guard; `

// guardPlanGit prefixes command with planGitGuard when it could run git:
// its text, quotes and backslashes aside, names git. Others keep their
// speed.
func guardPlanGit(command string) string {
	if !strings.Contains(strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(command), "git") {
		return command
	}
	return planGitGuard + "\n" + command
}

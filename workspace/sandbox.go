package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// probeTimeout bounds the one-off bwrap check at start.
const probeTimeout = 20 * time.Second

// sandbox is how bash commands are started.
type sandbox struct {
	level Level
	bwrap string // path to bwrap when level is LevelBwrap
	bash  string // path to bash (same inside the sandbox: the root is bound read-only)
}

// chooseSandbox applies H9_SANDBOX: "none", "bwrap" (must work) or "auto"
// (bwrap if a trivial command runs under it, else none with a warning).
func chooseSandbox(mode, root string) (sandbox, string, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return sandbox{}, "", fmt.Errorf("bash is required: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "none":
		return sandbox{level: LevelNone, bash: bash}, "", nil
	case "", "auto":
		sb, err := probeBwrap(root, bash)
		if err != nil {
			return sandbox{level: LevelNone, bash: bash}, fmt.Sprintf(
				"bubblewrap sandbox unavailable (%v): bash commands run UNSANDBOXED with the bot's file access; "+
					"plan mode falls back to a read-only command allowlist. Install bubblewrap and allow user namespaces, "+
					"or set H9_SANDBOX=none to acknowledge", err), nil
		}
		return sb, "", nil
	case "bwrap":
		sb, err := probeBwrap(root, bash)
		if err != nil {
			return sandbox{}, "", fmt.Errorf("%w: H9_SANDBOX=bwrap but %v", ErrSandboxUnavailable, err)
		}
		return sb, "", nil
	default:
		return sandbox{}, "", fmt.Errorf("%w: H9_SANDBOX=%q (want auto, bwrap or none)", ErrInvalidSandbox, mode)
	}
}

// probeBwrap runs `true` with the exact options real commands get, so any
// missing capability (namespaces, /proc mount) shows up now, not mid-session.
func probeBwrap(root, bash string) (sandbox, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return sandbox{}, fmt.Errorf("bwrap not found: %w", err)
	}
	dir, err := os.MkdirTemp(root, ".probe-")
	if err != nil {
		return sandbox{}, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	env := commandEnv(dir, false)
	cmd := exec.CommandContext(ctx, path, bwrapArgs(dir, false, env, bash, "true")...)
	cmd.Dir = dir
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return sandbox{}, fmt.Errorf("%s --unshare-all failed: %s", path, msg)
	}
	return sandbox{level: LevelBwrap, bwrap: path, bash: bash}, nil
}

// command builds the process for one bash call in dir.
func (s sandbox) command(dir, command string, readOnly bool) *exec.Cmd {
	env := commandEnv(dir, readOnly)
	var cmd *exec.Cmd
	if s.level == LevelBwrap {
		cmd = exec.Command(s.bwrap, bwrapArgs(dir, readOnly, env, s.bash, command)...)
	} else {
		cmd = exec.Command(s.bash, "-c", command)
	}
	cmd.Dir = dir
	cmd.Env = env // bwrap itself gets the clean environment too
	return cmd
}

// bwrapArgs: read-only root, fresh /dev, fresh /proc (the host's would show
// the bot's /proc/<pid>/environ), private /tmp, the workspace bound after
// /tmp (it may live under /tmp) and read-only in plan mode, every namespace
// unshared (no network, own PIDs), killed with its parent, new session (no
// TIOCSTI to a terminal), and only our environment.
func bwrapArgs(dir string, readOnly bool, env []string, bash, command string) []string {
	bind := "--bind"
	if readOnly {
		bind = "--ro-bind"
	}
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		bind, dir, dir,
		"--chdir", dir,
		"--unshare-all",
		"--die-with-parent",
		"--new-session",
		"--clearenv",
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return append(args, "--", bash, "-c", command)
}

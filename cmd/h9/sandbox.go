package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
)

const (
	bwrapHint  = "install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces (in Docker: a seccomp profile that permits them)"
	cgroupHint = "give h9 a cgroup it may manage (systemd: Delegate=yes; or run it as root) to enforce H9_SANDBOX_MEMORY and H9_SANDBOX_PIDS"
)

// checkSandbox sets the sandbox up exactly as the bot will, in a throwaway
// root with the real data directory hidden, then verifies each guarantee
// live with probe commands inside it and reports one line for each.
func checkSandbox(ctx context.Context, cfg Config) finding {
	root, err := os.MkdirTemp("", "h9-doctor-")
	if err != nil {
		return failed("check TMPDIR", "cannot create a probe directory: %v", err)
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return failed("set H9_DATA_DIR to a directory h9 may write", "cannot create %s: %v", cfg.DataDir, err)
	}
	wc := cfg.workspaceConfig(filepath.Join(root, "workspaces"))
	// No template here: the configuration check reports a bad one with the right hint.
	wc.Template = ""
	m, err := workspace.NewManager(wc)
	if err != nil {
		return failed(bwrapHint+", or run on a kernel with Landlock (H9_SANDBOX=none runs unsandboxed)", "%v", err)
	}
	f := sandboxSummary(cfg, m)
	for _, c := range m.Verify(ctx) {
		switch {
		case !c.OK && !c.Skipped:
			f.verdict, f.hint = verdictFail, "a guarantee failed: do not run h9 like this; "+bwrapHint
			f.more = append(f.more, fmt.Sprintf("✗ %s: %s", c.Name, c.Detail))
		case c.Skipped:
			f.verdict = max(f.verdict, verdictWarn)
			if f.hint == "" && strings.Contains(c.Detail, "cgroup") {
				f.hint = cgroupHint
			}
			f.more = append(f.more, fmt.Sprintf("⚠ %s: %s", c.Name, c.Detail))
		default:
			f.more = append(f.more, fmt.Sprintf("✓ %s: %s", c.Name, c.Detail))
		}
	}
	return f
}

// sandboxSummary is the first line: how bash runs and what backs it.
func sandboxSummary(cfg Config, m *workspace.Manager) finding {
	e := m.Enforcement()
	limits := "memory and process limits by " + e.Cgroups
	if e.Cgroups == "" {
		limits = "memory and process limits NOT enforced (" + e.NoCgroups + ")"
	}
	detail := fmt.Sprintf("plan mode read-only by %s; %s", e.Plan, limits)
	switch {
	case e.Level == workspace.LevelBwrap:
		return ok("bash runs under bubblewrap; %s; verified inside the sandbox:", detail)
	case e.Level == workspace.LevelLandlock:
		return warned(bwrapHint+" for namespaces (its own network, IPC, /proc and view)",
			"bash runs confined by Landlock (ABI %d): writes only to its workspace, home and /tmp; %s; verified:", e.LandlockABI, detail)
	case cfg.Sandbox == "none":
		return failed("set H9_SANDBOX=auto to use bubblewrap, or Landlock, when it works",
			"disabled by H9_SANDBOX=none: bash runs unsandboxed with h9's own rights outside plan mode; %s", detail)
	}
	return warned(bwrapHint, "UNSANDBOXED: %s; %s", m.Warning(), detail)
}

// workspaceConfig is the one place the sandbox settings become a
// workspace.Config: the whole data directory is hidden from commands, not
// only the workspaces (h9.db, repository caches, anything kept there).
func (c Config) workspaceConfig(root string) workspace.Config {
	return workspace.Config{
		Root:     root,
		Template: c.WorkspaceTemplate,
		Sandbox:  c.Sandbox,
		Hidden:   []string{c.DataDir},
		ROPaths:  c.SandboxROPaths,
		Limits: workspace.Limits{
			Memory: c.SandboxMemory, Pids: c.SandboxPids,
			FileSize: c.SandboxFileSize, TmpSize: c.SandboxTmpSize,
		},
	}
}

// checkROPaths catches the mistakes an operator makes; workspace.NewManager
// refuses the rest (a path inside the data directory) when h9 starts.
func checkROPaths(paths []string) error {
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
			return invalid("H9_SANDBOX_RO_PATHS: %q must be an absolute path other than /", p)
		}
		if _, err := os.Stat(p); err != nil {
			return invalid("H9_SANDBOX_RO_PATHS: %q cannot be used: %v", p, err)
		}
	}
	return nil
}

// containerNeed is one thing a container must allow for bubblewrap, each with
// the docker/compose setting that allows it (deploy/README.md says why).
type containerNeed struct {
	missing bool
	setting string
}

// checkContainer says, inside a container, which of the settings
// bubblewrap needs the container lacks; outside one it has nothing to say.
func checkContainer(ctx context.Context, _ Config) finding {
	kind := containerKind()
	if kind == "" {
		return ok("not in a container")
	}
	probe := bwrapProbe(ctx)
	if probe == "" {
		return ok("in a container (%s); bubblewrap works in it", kind)
	}
	var settings []string
	for _, n := range containerNeeds() {
		if n.missing {
			settings = append(settings, n.setting)
		}
	}
	hint := "run the container with " + strings.Join(settings, ", ") + " (deploy/README.md)"
	if len(settings) == 0 {
		hint = "see deploy/README.md for what bubblewrap needs in a container"
	}
	return warned(hint, "in a container (%s), bubblewrap cannot start: %s", kind, probe)
}

// containerKind names the container runtime h9 runs under, "" for none.
func containerKind() string {
	if _, err := os.Stat("/.dockerenv"); err == nil {
		return "docker"
	}
	if _, err := os.Stat("/run/.containerenv"); err == nil {
		return "podman"
	}
	if c := os.Getenv("container"); c != "" {
		return c
	}
	cg, _ := os.ReadFile("/proc/1/cgroup")
	for _, k := range []string{"kubepods", "docker", "containerd", "libpod", "lxc"} {
		if bytes.Contains(cg, []byte(k)) {
			return k
		}
	}
	return ""
}

// bwrapProbe starts the smallest sandbox bwrap builds for h9 and returns
// its error, "" when it works.
func bwrapProbe(ctx context.Context) string {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return "bwrap is not installed in the image (apt-get install bubblewrap)"
	}
	out, err := exec.CommandContext(ctx, bwrap, "--unshare-all", "--ro-bind", "/", "/",
		"--proc", "/proc", "--dev", "/dev", "true").CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out)) + " (" + err.Error() + ")"
	}
	return ""
}

// containerNeeds reads what the container allows from /proc.
func containerNeeds() []containerNeed {
	status, _ := os.ReadFile("/proc/self/status")
	profile, _ := os.ReadFile("/proc/self/attr/current")
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	return []containerNeed{
		{seccompFiltered(string(status)), "--security-opt seccomp=unconfined (or a profile allowing unshare, clone with namespaces, mount)"},
		{strings.Contains(string(profile), "docker-default") || strings.Contains(string(profile), "(enforce)"),
			"--security-opt apparmor=unconfined"},
		{procMasked(string(mounts)), "--security-opt systempaths=unconfined"},
		{userNamespacesOff(), "user namespaces on the host (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1)"},
	}
}

func seccompFiltered(status string) bool {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}

// procMasked: something is mounted over part of /proc (Docker masks
// /proc/kcore, /proc/sys, …), so the kernel refuses a new proc mount.
func procMasked(mountinfo string) bool {
	for _, line := range strings.Split(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], "/proc/") {
			return true
		}
	}
	return false
}

func userNamespacesOff() bool {
	for path, off := range map[string]string{"/proc/sys/user/max_user_namespaces": "0", "/proc/sys/kernel/unprivileged_userns_clone": "0"} {
		if v, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(v)) == off {
			return true
		}
	}
	return false
}

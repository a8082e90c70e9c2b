package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
)

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

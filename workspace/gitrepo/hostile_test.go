package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileConfig is what a model could write into its .git/config: every
// knob that runs a program or sends git elsewhere, each pointing at a
// script that leaves a marker on the host.
func hostileConfig(scripts, evilRemote, remote string) string {
	s := func(name string) string { return filepath.Join(scripts, name) }
	return fmt.Sprintf(`
[core]
	fsmonitor = %[1]s
	hooksPath = %[2]s
	sshCommand = %[3]s
	askPass = %[4]s
	pager = %[5]s
	editor = %[5]s
[credential]
	helper = %[6]s
[url "%[7]s"]
	insteadOf = %[8]s
	pushInsteadOf = %[8]s
[http]
	proxy = http://127.0.0.1:9
[diff "evil"]
	command = %[9]s
	textconv = %[9]s
[filter "evil"]
	clean = %[10]s
	smudge = %[10]s
[uploadpack]
	packObjectsHook = %[11]s
[remote "origin"]
	url = %[7]s
	pushurl = %[7]s
`, s("fsmonitor"), s("hooks"), s("ssh"), s("askpass"), s("pager"), s("credential"),
		evilRemote, remote, s("diff"), s("filter"), s("packobjects"))
}

// plantHostileRepo writes the scripts, hooks, attributes and config into
// the workspace's .git the way the model could (as files of the workspace).
func plantHostileRepo(t *testing.T, dir, markers, evilRemote, remote string) {
	t.Helper()
	scripts := filepath.Join(dir, ".git", "evil")
	names := []string{"fsmonitor", "ssh", "askpass", "pager", "credential", "diff", "filter", "packobjects"}
	for _, hook := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-checkout", "pre-receive"} {
		names = append(names, "hooks/"+hook)
	}
	for _, n := range names {
		marker := filepath.Join(markers, strings.ReplaceAll(n, "/", "-"))
		body := fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" > %s\ncat\n", marker)
		writeFiles(t, scripts, map[string]string{n: body})
		os.Chmod(filepath.Join(scripts, n), 0o755)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(hostileConfig(scripts, evilRemote, remote))
	f.Close()
	writeFiles(t, dir, map[string]string{".gitattributes": "* diff=evil filter=evil\n", "work.txt": "the model's work\n"})
}

// The model's .git/config sets hooks, an fsmonitor, a credential helper,
// insteadOf rewrites, ssh and proxy settings, diff and filter drivers and
// an upload-pack hook. h9's own git (the session repository's diff and
// push, with the host's credentials) runs none of them and pushes to the
// real remote. Under bwrap nothing runs on the host at all; without a
// sandbox, the checkpoint's commit is one of the model's own commands and
// runs its filter (as any of its commands could), and nothing else.
func TestHostileWorkspaceConfigNeverReachesH9sGit(t *testing.T) {
	for _, sandbox := range []string{"bwrap", "none"} {
		t.Run(sandbox, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"a.txt": "x\n"})
			evil := newRemote(t, map[string]string{"evil.txt": "evil\n"})
			markers := t.TempDir()
			f := newFixture(t, sandbox, Repo{Name: "r", URL: remote, GitHub: "acme/r"}, func(c *Config) { c.GitHubToken = "ghp_TOKEN123" })
			s := f.prepare("r")
			plantHostileRepo(t, f.dir(s), markers, evil, remote)
			ws := f.open(s)

			c, err := f.repos.Checkpoint(f.ctx, ws, s, "hostile", nil)
			if err != nil || c == nil {
				t.Fatalf("checkpoint: %+v, %v", c, err)
			}
			if _, err := f.repos.Changes(f.ctx, s); err != nil {
				t.Fatal(err)
			}
			var diff bytes.Buffer
			if err := f.repos.Diff(f.ctx, s, &diff); err != nil || !strings.Contains(diff.String(), "+the model's work") {
				t.Fatalf("diff: %v\n%s", err, diff.String())
			}
			if _, err := f.repos.Push(f.ctx, s); err != nil {
				t.Fatalf("push: %v", err)
			}

			if got := git(t, remote, "rev-parse", "refs/heads/"+s.Branch); got != c.ID {
				t.Errorf("the real remote has %s at %q, want the checkpoint %s", s.Branch, got, c.ID)
			}
			if refs := git(t, evil, "for-each-ref", "refs/heads/h9"); refs != "" {
				t.Errorf("the push was redirected to the model's remote: %s", refs)
			}
			ran := markersIn(t, markers)
			want := ""
			if sandbox == "none" {
				want = "filter" // the sandboxed commit is a model command; unsandboxed it runs on the host
			}
			if strings.Join(ran, ",") != want {
				t.Errorf("ran on the host: %v; want only %q", ran, want)
			}
			for _, cfg := range []string{filepath.Join(f.own(s), "config"), filepath.Join(f.repos.mirrorDir(Repo{Name: "r"}), "config")} {
				data, _ := os.ReadFile(cfg)
				if bytes.Contains(data, []byte("evil")) || bytes.Contains(data, []byte("ghp_TOKEN123")) {
					t.Errorf("%s took the workspace's settings or the token:\n%s", cfg, data)
				}
			}
		})
	}
}

func markersIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

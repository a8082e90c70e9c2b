package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/readonly"
)

// FuzzCheckReadOnly: the checker never panics, every refusal is an
// ErrReadOnly the agent can show the model, and — the oracle — a command it
// accepts changes nothing in the workspace when it really runs. The command
// runs under bwrap with the workspace writable and plan mode's environment,
// so only the checker stands between it and the files; a checker bug shows
// as a changed workspace, never as a changed host.
func FuzzCheckReadOnly(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	var w *Workspace
	if _, err := exec.LookPath("bwrap"); err == nil {
		w = newWS(f, "bwrap")
		seedWorkspace(f, w.Dir())
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		err := readonly.Check(cmd)
		if err != nil {
			if !errors.Is(err, ErrReadOnly) {
				t.Fatalf("readonly.Check(%q) = %v, not ErrReadOnly", cmd, err)
			}
			return
		}
		if w == nil || checkCommand(cmd) != nil {
			return
		}
		before := snapshot(t, w.Dir())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := w.run(ctx, planEnvPrefix(w)+cmd, BashOptions{Timeout: 3 * time.Second}); err != nil {
			t.Fatalf("run(%q): %v", cmd, err)
		}
		if after := snapshot(t, w.Dir()); after != before {
			seedWorkspace(t, w.Dir())
			t.Fatalf("accepted %q changed the workspace:\nbefore %s\nafter  %s", cmd, before, after)
		}
	})
}

// fuzzSeeds: everyday commands and the bypass classes.
func fuzzSeeds() []string {
	seeds := []string{
		"ls -la && grep -r foo .", "echo x > f", "$(curl x)", "for f in ./*; do cat \"$f\"; done",
		"git status && git log --oneline -3 && git diff", "sort -o out in", "sort in | uniq -c",
		"find . -name '*.go' -print", "sed -n 1p main.go", "git branch -a", "cat < main.go | wc -l",
		"test -v 'a[$(touch pwned)]'", "printf -v PATH .", "for f in o; do sort -$f x main.go; done",
		"find . -{\"delete\",print}", "sort * ", "sort -T -- -o out main.go", "uniq -- main.go -out",
		"git describe --dirty", "git remote -v add x y", "cat < /dev/tcp/127.0.0.1/1",
	}
	return seeds
}

// planEnvPrefix gives the command plan mode's git settings, which the
// checker counts on (no index refresh), while the mount stays writable.
func planEnvPrefix(w *Workspace) string {
	var b strings.Builder
	for _, kv := range commandEnv(place{dir: w.dir, home: w.home, readOnly: true}, "/tmp") {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			fmt.Fprintf(&b, "export %s='%s'; ", k, v)
		}
	}
	return b.String()
}

// seedWorkspace (re)creates a small repository with files an attack might
// target, named like options too.
func seedWorkspace(t testing.TB, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	for name, content := range map[string]string{
		"main.go": "package main\n\nfunc main() {}\n", "README.md": "# seed\n", "in": "b\na\na\n",
		"-o": "option-like name\n", "--output=x": "option-like name\n", "-delete": "option-like name\n",
	} {
		writeHostFile(t, filepath.Join(dir, name), content)
	}
	git := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm seed")
	git.Dir = dir
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("seeding git: %v\n%s", err, out)
	}
}

// snapshot hashes every name, mode, size, time and content under dir.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+" "+err.Error())
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		line := fmt.Sprintf("%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return fmt.Sprintf("%x (%d entries)", sum[:8], len(lines))
}

package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// plantProgramConfig makes the workspace a repository whose configuration
// (its own .git/config and the session home's ~/.gitconfig) names a
// program for every way git runs one on a read: an external diff, a
// textconv and a clean filter for f.txt, a gpg program and a pager; its
// last commit is signed, and f.txt changed since with a new mtime.
func plantProgramConfig(t *testing.T, w *Workspace) {
	t.Helper()
	dir := w.Dir()
	evil := filepath.Join(dir, ".git-evil.sh")
	g := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	g("init", "-q")
	writeHostFile(t, filepath.Join(dir, "f.txt"), "one\n")
	writeHostFile(t, filepath.Join(dir, ".gitattributes"), "f.txt diff=evil filter=evil\n")
	g("add", ".")
	g("commit", "-qm", "first")
	tree := g("rev-parse", "HEAD^{tree}")
	parent := g("rev-parse", "HEAD")
	signed := "tree " + tree + "\nparent " + parent + "\nauthor a <a@x> 1700000000 +0000\ncommitter a <a@x> 1700000000 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
	os.WriteFile(filepath.Join(dir, ".git", "signed"), []byte(signed), 0o644)
	id := g("hash-object", "-t", "commit", "-w", filepath.Join(dir, ".git", "signed"))
	g("update-ref", "HEAD", id)
	writeHostFile(t, evil, "#!/bin/sh\necho \"EVIL-RAN $0 $*\" >&2\necho EVIL-RAN\ncat\n")
	os.Chmod(evil, 0o755)
	for _, kv := range [][2]string{{"diff.external", evil}, {"diff.evil.textconv", evil}, {"diff.evil.command", evil},
		{"filter.evil.clean", evil}, {"filter.evil.smudge", evil}, {"core.pager", evil}, {"pager.log", evil}, {"gpg.openpgp.program", evil}} {
		g("config", kv[0], kv[1])
	}
	writeHostFile(t, filepath.Join(w.home, ".gitconfig"), "[gpg]\n\tprogram = "+evil+"\n[alias]\n\tst = !"+evil+"\n")
	writeHostFile(t, filepath.Join(dir, "f.txt"), "two\n")
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "f.txt"), future, future)
}

// Issue 20's attacks on plan mode outside bwrap: every git read the
// checker accepts, in a repository whose configuration names a program,
// runs git but never that program. Execution mode, where the model may
// run what it likes, is the control that the plant works.
func TestPlanModeGitRunsNoProgramTheRepositoryNames(t *testing.T) {
	m := newManager(t, "none")
	testenv.Need(t, "landlock:1")
	w := openWS(t, m, "s")
	plantProgramConfig(t, w)
	if r := mustRun(t, w, "git diff", BashOptions{}); !strings.Contains(r.Output, "EVIL-RAN") {
		t.Fatalf("control: the planted external diff did not run in execution mode: %+v", r)
	}
	for _, cmd := range []string{"git diff", "git diff --stat", "git status", "git status --short", "git log -p",
		"git show", "git show HEAD~1", "git blame f.txt", "git log --show-signature -1", "git log --format=%G? -1",
		"git log -1", "git diff HEAD~1 HEAD", "git st"} {
		r, err := w.Bash(context.Background(), cmd, BashOptions{ReadOnly: true})
		if err != nil {
			t.Logf("%q refused by the checker: %v", cmd, err)
			r = mustRun(t, w, cmd, BashOptions{ReadOnly: true}) // the kernel's and git's part alone
		}
		if strings.Contains(r.Output, "EVIL-RAN") {
			t.Errorf("plan mode %q ran the repository's program:\n%s", cmd, r.String())
		}
	}
	if r := mustBash(t, w, "git log --format=%s", BashOptions{ReadOnly: true}); !strings.Contains(r.Output, "signed") {
		t.Errorf("git does not work in plan mode: %+v", r)
	}
}

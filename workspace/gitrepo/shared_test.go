package gitrepo

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace"
)

// The packs a checkout borrows are the cache's and every other checkout's
// files. Under bwrap no command can change, move, remove or re-link them,
// nor move the directories holding them out of the read-only mount; git
// itself still commits. The file tools (in h9) refuse to write through a
// symlink into one. The cache's packs are byte for byte as before.
func TestBorrowedObjectsCannotBeChanged(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "bwrap", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	other := f.prepare("r")
	ws := f.open(s)
	mirror := f.repos.mirrorDir(Repo{Name: "r"})
	before := packSums(t, mirror)

	attacks := []string{
		"chmod u+w .git/objects/pack/*.pack",
		"for p in .git/objects/pack/*.pack; do echo x >> $p; done",
		"for p in .git/objects/pack/*.pack; do : > $p; done",
		"for p in .git/objects/pack/*.pack; do truncate -s 0 $p; done",
		"rm -f .git/objects/pack/*",
		"ln .git/objects/pack/*.pack stolen",
		"mv .git/objects/pack .git/objects/moved",
		"mv .git/objects .git/moved",
		"mv .git moved",
		"rm -rf .git/objects/pack",
		"touch .git/objects/pack/new",
		"git repack -a -d -q",
		"git gc -q --prune=now",
	}
	for _, a := range attacks {
		res := f.bash(ws, a, false)
		if strings.HasPrefix(a, "git ") {
			continue // fails or not, the checkout must still work: checked below
		}
		if res.ExitCode == 0 {
			t.Errorf("%q succeeded in the sandbox:\n%s", a, res.String())
		}
	}
	if res := f.bash(ws, "ls .git/objects/pack/*.pack && git log --oneline | wc -l && echo z > z && git add z && git commit -qm z && echo committed", false); !strings.Contains(res.Output, "committed") {
		t.Errorf("git stopped working after the attacks:\n%s", res.String())
	}
	if after := packSums(t, mirror); after != before {
		t.Errorf("the cache's packs changed:\n%s\n→\n%s", before, after)
	}
	if got := git(t, f.dir(other), "fsck", "--no-dangling"); got != "" {
		t.Errorf("another session's checkout is damaged: %s", got)
	}

	// A symlink to a borrowed pack: the file tools refuse to write through it.
	f.bash(ws, "ln -sf .git/objects/pack/$(cd .git/objects/pack && ls *.pack | head -1) alias", false)
	if _, err := ws.WriteFile("alias", "poison"); !errors.Is(err, workspace.ErrSharedFile) {
		t.Errorf("write_file through a symlink to a borrowed pack: %v, want ErrSharedFile", err)
	}
	if _, err := ws.EditFile("alias", "PACK", "poison", false); err == nil {
		t.Error("edit_file through a symlink to a borrowed pack succeeded")
	}
	if after := packSums(t, mirror); after != before {
		t.Error("the file tools changed the cache's packs")
	}
}

func packSums(t *testing.T, repo string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(repo, "objects/pack/*"))
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		b.WriteString(filepath.Base(p) + " " + string(sum[:4]) + "\n")
	}
	return b.String()
}

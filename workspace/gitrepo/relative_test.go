package gitrepo

import (
	"path/filepath"
	"testing"
)

// "URL is anything git clone accepts (…, a local path)": a path relative
// to h9's working directory too, as `git clone ./backend.git` takes it.
func TestRelativeLocalURL(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	t.Chdir(filepath.Dir(remote))
	f := newFixture(t, "none", Repo{Name: "r", URL: "./" + filepath.Base(remote)})
	s := Session{ID: "T1-C1-1700000000.0001", Repo: "r", Branch: NewBranch("relative")}
	if _, err := f.repos.Prepare(f.ctx, s); err != nil {
		t.Fatalf("Prepare with a relative local path: %v", err)
	}
}

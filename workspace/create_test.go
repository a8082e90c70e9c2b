package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Create fills a workspace once, out of sight until it is whole: a fill
// that fails leaves nothing, a later Create fills again, and an existing
// workspace is not touched.
func TestCreate(t *testing.T) {
	m := newManager(t, "none")
	const id = "C1-1700000000.000200"
	boom := errors.New("boom")
	if _, err := m.Create(id, func(dir string) error {
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Create with a failing fill: %v", err)
	}
	if ok, _ := m.Exists(id); ok {
		t.Fatal("a failed fill left a workspace")
	}
	entries, _ := os.ReadDir(m.root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".new-") {
			t.Errorf("a failed fill left %s", e.Name())
		}
	}
	created, err := m.Create(id, func(dir string) error { return os.WriteFile(filepath.Join(dir, "whole"), []byte("x"), 0o644) })
	if err != nil || !created {
		t.Fatalf("Create = %t, %v", created, err)
	}
	created, err = m.Create(id, func(string) error { t.Error("an existing workspace was filled again"); return nil })
	if err != nil || created {
		t.Errorf("Create of an existing workspace = %t, %v", created, err)
	}
	dir, _ := m.Path(id)
	if _, err := os.Stat(filepath.Join(dir, "whole")); err != nil {
		t.Errorf("the workspace lacks its fill: %v", err)
	}
}

// OpenFile and Remove stay inside the workspace and never block.
func TestOpenFileAndRemove(t *testing.T) {
	w := newWS(t, "none")
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(w.Dir(), "link"))
	syscall.Mkfifo(filepath.Join(w.Dir(), "fifo"), 0o644)
	os.WriteFile(filepath.Join(w.Dir(), "plain"), []byte("ok"), 0o644)
	if _, err := w.OpenFile("link"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("OpenFile through a symlink out: %v", err)
	}
	if _, err := w.OpenFile("fifo"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenFile of a FIFO: %v", err)
	}
	f, err := w.OpenFile("plain")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := w.Remove("link"); err != nil {
		t.Errorf("Remove of a symlink: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Error("Remove of a symlink removed its target")
	}
	if err := w.Remove("missing"); err != nil {
		t.Errorf("Remove of a missing file: %v", err)
	}
	if err := w.Remove("../x"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("Remove outside: %v", err)
	}
}

// Only a pack directory holding a file shared with another name needs
// the mounts; one reached through a symlink is not followed.
func TestFindShared(t *testing.T) {
	dir := t.TempDir()
	pack := filepath.Join(dir, ".git", "objects", "pack")
	os.MkdirAll(pack, 0o755)
	os.WriteFile(filepath.Join(pack, "pack-1.pack"), []byte("x"), 0o444)
	if s, err := findShared(dir); err != nil || s != nil {
		t.Errorf("own packs: %+v, %v; want no mounts", s, err)
	}
	other := filepath.Join(t.TempDir(), "cache.pack")
	os.WriteFile(other, []byte("y"), 0o444)
	os.Link(other, filepath.Join(pack, "pack-2.pack"))
	s, err := findShared(dir)
	if err != nil || s == nil || len(s.dsts) != 3 || s.dsts[2] != pack {
		t.Fatalf("borrowed packs: %+v, %v; want .git, objects and pack", s, err)
	}
	args := strings.Join(s.bwrapArgs(false), " ")
	s.close()
	if !strings.Contains(args, "--bind-fd 5 "+filepath.Join(dir, ".git")) || !strings.Contains(args, "--ro-bind-fd 7 "+pack) {
		t.Errorf("bwrap args %q", args)
	}
	linked := t.TempDir()
	os.Symlink(filepath.Join(dir, ".git"), filepath.Join(linked, ".git"))
	if s, err := findShared(linked); err != nil || s != nil {
		t.Errorf("a .git symlink was followed: %+v, %v", s, err)
	}
}

// write_file refuses to write in place through a symlink to a file with
// another name (a borrowed object), and replaces one it is given directly.
func TestWriteFileKeepsSharedInodes(t *testing.T) {
	w := newWS(t, "none")
	shared := filepath.Join(t.TempDir(), "shared")
	os.WriteFile(shared, []byte("original"), 0o644)
	os.Link(shared, filepath.Join(w.Dir(), "hard"))
	os.Symlink("hard", filepath.Join(w.Dir(), "soft"))
	if _, err := w.WriteFile("soft", "poison"); !errors.Is(err, ErrSharedFile) {
		t.Errorf("write through a symlink to a shared file: %v", err)
	}
	if _, err := w.WriteFile("hard", "mine"); err != nil {
		t.Errorf("write of the link itself: %v", err)
	}
	if data, _ := os.ReadFile(shared); string(data) != "original" {
		t.Errorf("the shared file became %q", data)
	}
}

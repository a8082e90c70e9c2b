package workspace

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialFiles makes a FIFO (nobody ever writes to it), a listening unix
// socket, a character device when root may make one, and symlinks to the
// FIFO, all in the workspace.
func specialFiles(t *testing.T, dir string) []string {
	t.Helper()
	names := []string{"fifo", "AGENTS.md", "sock", "link-to-fifo"}
	for _, n := range []string{"fifo", "AGENTS.md"} {
		if err := syscall.Mkfifo(filepath.Join(dir, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Symlink("fifo", filepath.Join(dir, "link-to-fifo")); err != nil {
		t.Fatal(err)
	}
	if syscall.Mknod(filepath.Join(dir, "null-device"), syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		names = append(names, "null-device")
	}
	return names
}

// File tools refuse FIFOs, sockets and devices at once, with an error the
// model reads, and never block on them.
func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	w := newWS(t, "none")
	ops := map[string]func(string) (string, error){
		"read":         func(p string) (string, error) { return w.ReadFile(p, 0, 0) },
		"edit":         func(p string) (string, error) { return w.EditFile(p, "a", "b", false) },
		"write":        func(p string) (string, error) { return w.WriteFile(p, "x") },
		"preview edit": func(p string) (string, error) { return w.PreviewEdit(p, "a", "b", false) },
		"preview":      func(p string) (string, error) { return w.PreviewWrite(p, "x") },
	}
	for _, name := range specialFiles(t, w.Dir()) {
		for op, f := range ops {
			t.Run(op+" "+name, func(t *testing.T) {
				done := make(chan error, 1)
				go func() {
					_, err := f(name)
					done <- err
				}()
				select {
				case err := <-done:
					if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), name) {
						t.Fatalf("got %v, want ErrNotRegular naming %q", err, name)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("%s of %s blocked", op, name)
				}
			})
		}
	}
	if fi, err := os.Lstat(filepath.Join(w.Dir(), "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	specialFiles(t, dir)
	writeHostFile(t, filepath.Join(dir, "ok.md"), "0123456789")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := ReadRegularFile(root, "ok.md", 4); err != nil || string(b) != "0123" {
		t.Errorf("capped read = %q, %v", b, err)
	}
	for _, n := range []string{"AGENTS.md", "link-to-fifo", "sock"} {
		if _, err := ReadRegularFile(root, n, 100); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v", n, err)
		}
	}
}

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscapes(t *testing.T) {
	m := newManager(t, "none")
	w := openWS(t, m, "alice")
	sib := openWS(t, m, "bob")
	plantEscapeLinks(t, w, sib)
	const probe = "h9-escape-probe-7c1"
	paths := []string{
		"../../etc/passwd",
		"/etc/passwd",
		"etclink/passwd",
		"etclink/" + probe,
		"pw",
		"sibling/secret.txt",
		"relsibling/secret.txt",
		"relsibling/" + probe,
		"../bob/" + probe,
		"a/../../bob/" + probe,
		filepath.Join(sib.Dir(), probe),
		w.Dir() + "/../bob/" + probe,
	}
	ops := map[string]func(string) (string, error){
		"read":    func(p string) (string, error) { return w.ReadFile(p, 0, 0) },
		"write":   func(p string) (string, error) { return w.WriteFile(p, "pwned\n") },
		"edit":    func(p string) (string, error) { return w.EditFile(p, "root", "pwned", true) },
		"preview": func(p string) (string, error) { return w.PreviewWrite(p, "pwned\n") },
	}
	for name, op := range ops {
		for _, p := range paths {
			t.Run(name+" "+p, func(t *testing.T) {
				out, err := op(p)
				if !errors.Is(err, ErrOutsideWorkspace) {
					t.Fatalf("got %q, %v; want ErrOutsideWorkspace", out, err)
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name the path", err)
				}
			})
		}
	}
	for _, p := range []string{"/etc/" + probe, filepath.Join(sib.Dir(), probe), filepath.Join(m.root, probe)} {
		if fileExists(p) {
			os.Remove(p)
			t.Errorf("%s was written outside the workspace", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sib.Dir(), "secret.txt")); string(b) != "bob's secret\n" {
		t.Errorf("sibling file changed: %q", b)
	}
	ents, _ := os.ReadDir(sib.Dir())
	if len(ents) != 1 {
		t.Errorf("sibling workspace has %d entries, want 1", len(ents))
	}
}

// plantEscapeLinks gives w symlinks out of it: to /etc, to /etc/passwd and
// to the sibling workspace sib (absolute and relative), which holds a secret.
func plantEscapeLinks(t *testing.T, w, sib *Workspace) {
	t.Helper()
	writeHostFile(t, filepath.Join(sib.Dir(), "secret.txt"), "bob's secret\n")
	for link, target := range map[string]string{
		"etclink": "/etc", "sibling": sib.Dir(), "relsibling": "../bob", "pw": "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(w.Dir(), link)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAbsolutePathInsideWorkspace(t *testing.T) {
	w := newWS(t, "none")
	abs := filepath.Join(w.Dir(), "sub", "a.txt")
	if _, err := w.WriteFile(abs, "hello\n"); err != nil {
		t.Fatal(err)
	}
	out, err := w.ReadFile(abs, 0, 0)
	if err != nil || !strings.Contains(out, "hello") {
		t.Fatalf("read %q, %v", out, err)
	}
	if err := os.Symlink("sub/a.txt", filepath.Join(w.Dir(), "inner")); err != nil {
		t.Fatal(err)
	}
	if out, err := w.ReadFile("inner", 0, 0); err != nil || !strings.Contains(out, "hello") {
		t.Fatalf("symlink inside the workspace: %q, %v", out, err)
	}
}

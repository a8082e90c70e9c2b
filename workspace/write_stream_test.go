package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFrom streams a file in, creating its folders; more than the limit
// fails with ErrTooLarge and leaves neither the file nor a temporary one;
// a path that escapes (by .. or through a symlink) or names a directory is
// refused; an existing file is replaced whole.
func TestWriteFrom(t *testing.T) {
	w := newWS(t, "none")
	n, err := w.WriteFrom(".h9/attachments/1.2-a.log", strings.NewReader("hello"), 5)
	if err != nil || n != 5 {
		t.Fatalf("WriteFrom = %d, %v", n, err)
	}
	if data, _ := os.ReadFile(filepath.Join(w.Dir(), ".h9/attachments/1.2-a.log")); string(data) != "hello" {
		t.Errorf("file holds %q", data)
	}
	if _, err := w.WriteFrom(".h9/attachments/1.2-a.log", strings.NewReader("bye"), 5); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(w.Dir(), ".h9/attachments/1.2-a.log")); string(data) != "bye" {
		t.Errorf("replaced file holds %q", data)
	}
	if _, err := w.WriteFrom(".h9/attachments/big", strings.NewReader("123456"), 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v, want ErrTooLarge", err)
	}
	entries, _ := os.ReadDir(filepath.Join(w.Dir(), ".h9/attachments"))
	if len(entries) != 1 {
		t.Errorf("after a refused write the folder holds %d entries, want the one file", len(entries))
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(w.Dir(), "out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "out/x", "/etc/x"} {
		if _, err := w.WriteFrom(p, strings.NewReader("x"), 5); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("WriteFrom(%q) = %v, want ErrOutsideWorkspace", p, err)
		}
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Errorf("a write escaped the workspace: %v", left)
	}
	if _, err := w.WriteFrom(".h9", strings.NewReader("x"), 5); !errors.Is(err, ErrIsDirectory) {
		t.Errorf("onto a directory: %v, want ErrIsDirectory", err)
	}
}

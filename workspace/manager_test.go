package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

func TestDirName(t *testing.T) {
	ids := []string{
		"C123-1700000000.000100", "a/b", "a_2fb", "a_b", "..", ".", ".hidden", "../../etc",
		"x y", "ünï", strings.Repeat("z", 300), strings.Repeat("z", 301), "-", "a\x00b",
	}
	seen := map[string]string{}
	for _, id := range ids {
		name, err := dirName(id)
		if err != nil {
			t.Fatalf("dirName(%q): %v", id, err)
		}
		if name == "." || name == ".." || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "/\x00") || len(name) > maxDirName {
			t.Errorf("dirName(%q) = %q is unsafe", id, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("ids %q and %q share directory %q", prev, id, name)
		}
		seen[name] = id
	}
	if got, _ := dirName("C123-1700000000.000100"); got != "C123-1700000000.000100" {
		t.Errorf("ordinary id changed: %q", got)
	}
	if _, err := dirName(""); !errors.Is(err, ErrInvalidSessionID) {
		t.Errorf("empty id: %v", err)
	}
}

func TestManagerOpen(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	tmpl := t.TempDir()
	writeHostFile(t, filepath.Join(tmpl, "README.md"), "template\n")
	writeHostFile(t, filepath.Join(tmpl, "sub", "run.sh"), "#!/bin/sh\necho run\n")
	os.Chmod(filepath.Join(tmpl, "sub", "run.sh"), 0o755)
	m, err := NewManager(Config{Root: root, Template: tmpl, Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Level() != LevelNone || m.Warning() != "" {
		t.Fatalf("level %s, warning %q", m.Level(), m.Warning())
	}
	w := openWS(t, m, "../evil/session")
	if filepath.Dir(w.Dir()) != root {
		t.Fatalf("workspace %s not directly under %s", w.Dir(), root)
	}
	if out, err := w.ReadFile("README.md", 0, 0); err != nil || !strings.Contains(out, "template") {
		t.Fatalf("template not copied: %q, %v", out, err)
	}
	if r := mustBash(t, w, "./sub/run.sh", BashOptions{}); r.Output != "run\n" {
		t.Errorf("template exec bit lost: %+v", r)
	}
	if _, err := w.WriteFile("README.md", "changed\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := w.ReadFile("README.md", 0, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}

	again := openWS(t, m, "../evil/session")
	if out, _ := again.ReadFile("README.md", 0, 0); !strings.Contains(out, "changed") {
		t.Errorf("reopen recopied the template: %q", out)
	}
	other := openWS(t, m, "other")
	if other.Dir() == again.Dir() {
		t.Error("two sessions share a directory")
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".home" {
			t.Errorf("leftover temporary directory %s", e.Name())
		}
	}
}

func TestNewManagerErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeHostFile(t, file, "")
	tests := []struct {
		name string
		cfg  Config
		err  error
	}{
		{"no root", Config{Sandbox: "none"}, ErrInvalidArgument},
		{"bad sandbox", Config{Root: dir, Sandbox: "docker"}, ErrInvalidSandbox},
		{"template missing", Config{Root: dir, Template: filepath.Join(dir, "nope"), Sandbox: "none"}, os.ErrNotExist},
		{"template is a file", Config{Root: dir, Template: file, Sandbox: "none"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewManager(tc.cfg)
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

// TestSandboxWithoutBwrap hides bwrap from PATH: auto falls back to the
// Landlock execution mode with a warning, never to running unsandboxed;
// bwrap fails with ErrSandboxUnavailable.
func TestSandboxWithoutBwrap(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	m, err := NewManager(Config{Root: t.TempDir(), Sandbox: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if landlockABI() < 1 {
		t.Skip("no Landlock here: auto refuses to start (not tested)")
	}
	if m.Level() != LevelLandlock || !strings.Contains(m.Warning(), "Landlock") || !strings.Contains(m.Warning(), "bubblewrap") {
		t.Fatalf("auto without bwrap: level %s, warning %q", m.Level(), m.Warning())
	}
	if r := mustBash(t, openWS(t, m, "s"), "echo works > f && read -r l < f && echo $l", BashOptions{}); r.Output != "works\n" {
		t.Errorf("a command in the fallback: %+v", r)
	}
	_, err = NewManager(Config{Root: t.TempDir(), Sandbox: "bwrap"})
	if !errors.Is(err, ErrSandboxUnavailable) || !strings.Contains(err.Error(), "bwrap") {
		t.Fatalf("bwrap required without bwrap: %v", err)
	}
}

func TestSandboxAutoUsesBwrap(t *testing.T) {
	testenv.Need(t, "bwrap")
	m := newManager(t, "auto")
	if m.Level() != LevelBwrap || m.Warning() != "" {
		t.Fatalf("auto with working bwrap: level %s, warning %q", m.Level(), m.Warning())
	}
	ents, _ := os.ReadDir(m.root)
	if len(ents) != 0 {
		t.Errorf("probe left %d entries in the root", len(ents))
	}
}

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"abc", "def"}, "abcdef"},
		{"exact", []string{"0123456789"}, "0123456789"},
		{"cut in one write", []string{"0123456789abcdef"}, "01234\n… [6 bytes of output cut; showing the first 5 and last 5] …\nbcdef"},
		{"cut across writes", []string{"01234", "567", "89abc", "def"}, "01234\n… [6 bytes of output cut; showing the first 5 and last 5] …\nbcdef"},
		{"many small", strings.Split("0123456789abcdef", ""), "01234\n… [6 bytes of output cut; showing the first 5 and last 5] …\nbcdef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeadTail(10)
			for _, s := range tc.writes {
				h.Write([]byte(s))
			}
			if got := h.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Path names the directory Open uses, without creating it.
func TestManagerPath(t *testing.T) {
	m, err := NewManager(Config{Root: t.TempDir(), Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Path("../evil/session")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("Path created %s (lstat err %v)", p, err)
	}
	if w := openWS(t, m, "../evil/session"); w.Dir() != p {
		t.Errorf("Open made %s, Path said %s", w.Dir(), p)
	}
	if m.Templated() {
		t.Error("Templated without a template")
	}
	if _, err := m.Path(""); err == nil {
		t.Error("Path of an empty session id gave no error")
	}
}

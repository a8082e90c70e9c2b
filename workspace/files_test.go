package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

func TestReadFile(t *testing.T) {
	w := newWS(t, "none")
	writeReadFixtures(t, w)
	tests := []struct {
		name          string
		path          string
		offset, limit int
		want          []string
		notWant       []string
		err           error
	}{
		{name: "whole", path: "ten.txt", want: []string{"     1\tline 1\n", "    10\tline 10\n"}, notWant: []string{"showing"}},
		{name: "offset", path: "ten.txt", offset: 9, want: []string{"     9\tline 9\n", "    10\tline 10"}, notWant: []string{"line 8\n"}},
		{name: "limit", path: "ten.txt", offset: 2, limit: 3, want: []string{"     2\tline 2", "     4\tline 4", "[showing lines 2-4 of 10; call read_file with offset=5 to read more]"}, notWant: []string{"line 5"}},
		{name: "crlf", path: "crlf.txt", want: []string{"     1\ta\n"}, notWant: []string{"\r"}},
		{name: "empty", path: "empty.txt", want: []string{"empty"}},
		{name: "long line cut", path: "long.txt", want: []string{"[line cut]", "     2\tshort"}},
		{name: "binary", path: "bin.dat", err: ErrBinary},
		{name: "invalid utf-8", path: "latin1.txt", err: ErrBinary},
		{name: "missing", path: "nope.txt", err: ErrNotFound},
		{name: "directory", path: "dir", err: ErrIsDirectory},
		{name: "past end", path: "ten.txt", offset: 11, err: ErrInvalidArgument},
		{name: "negative", path: "ten.txt", offset: -1, err: ErrInvalidArgument},
		{name: "empty path", path: "", err: ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := w.ReadFile(tc.path, tc.offset, tc.limit)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				if tc.path != "" && !strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q does not name %q", err, tc.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
}

// writeReadFixtures fills w with the files TestReadFile reads.
func writeReadFixtures(t *testing.T, w *Workspace) {
	t.Helper()
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	for name, content := range map[string]string{
		"ten.txt":    strings.Join(lines, "\n") + "\n",
		"crlf.txt":   "a\r\nb\r\n",
		"empty.txt":  "",
		"bin.dat":    "ELF\x00\x01\x02",
		"latin1.txt": "caf\xe9\n",
		"long.txt":   strings.Repeat("x", 5000) + "\nshort\n",
		"dir/f":      "",
	} {
		writeHostFile(t, filepath.Join(w.Dir(), name), content)
	}
}

func TestReadFileSizeCap(t *testing.T) {
	w := newWS(t, "none")
	line := strings.Repeat("y", 99)
	writeHostFile(t, filepath.Join(w.Dir(), "big.txt"), strings.Repeat(line+"\n", 1500))
	out, err := w.ReadFile("big.txt", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > MaxReadChars+200 {
		t.Fatalf("output %d chars, cap %d", len(out), MaxReadChars)
	}
	if !strings.Contains(out, "of 1500; call read_file with offset=") {
		t.Fatalf("no note on how to read more: %q", out[len(out)-200:])
	}
}

func TestWriteFile(t *testing.T) {
	w := newWS(t, "none")
	out, err := w.WriteFile("a/b/c.txt", "hello\n")
	if err != nil || out != "wrote 6 bytes to a/b/c.txt" {
		t.Fatalf("WriteFile = %q, %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), "a/b/c.txt")); string(b) != "hello\n" {
		t.Fatalf("content %q", b)
	}
	// Overwrite keeps the mode, leaves no temporary files.
	os.Chmod(filepath.Join(w.Dir(), "a/b/c.txt"), 0o755)
	if _, err := w.WriteFile("a/b/c.txt", "bye\n"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(w.Dir(), "a/b/c.txt"))
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Join(w.Dir(), "a/b"))
	if len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
	for _, p := range []string{"a/b", ".", "a/b/c.txt/x"} {
		if _, err := w.WriteFile(p, "x"); err == nil {
			t.Errorf("WriteFile(%q) succeeded", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), "a/b/c.txt")); string(b) != "bye\n" {
		t.Errorf("failed writes changed the file: %q", b)
	}
}

func TestEditFile(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	const orig = "alpha beta\nbeta gamma\ndelta\n"
	tests := []struct {
		name, old, new string
		all            bool
		want           string // result message or file content check
		content        string
		err            error
	}{
		{name: "unique", old: "delta", new: "DELTA", want: "replaced 1 occurrence", content: "alpha beta\nbeta gamma\nDELTA\n"},
		{name: "multiple", old: "beta", new: "B", err: ErrMultipleMatches, want: "2 times"},
		{name: "replace all", old: "beta", new: "B", all: true, want: "replaced 2 occurrences", content: "alpha B\nB gamma\ndelta\n"},
		{name: "not found", old: "epsilon", new: "x", err: ErrNoMatch},
		{name: "empty old", old: "", new: "x", err: ErrInvalidArgument},
		{name: "identical", old: "delta", new: "delta", err: ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWS(t, "none")
			p := filepath.Join(w.Dir(), "f.txt")
			writeHostFile(t, p, orig)
			out, err := w.EditFile("f.txt", tc.old, tc.new, tc.all)
			got, _ := os.ReadFile(p)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "f.txt") || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %v mentioning f.txt and %q", err, tc.err, tc.want)
				}
				if string(got) != orig {
					t.Errorf("failed edit changed the file: %q", got)
				}
				return
			}
			if err != nil || !strings.Contains(out, tc.want) {
				t.Fatalf("EditFile = %q, %v", out, err)
			}
			if string(got) != tc.content {
				t.Errorf("content %q, want %q", got, tc.content)
			}
		})
	}
}

func TestEditFileMissingAndBinary(t *testing.T) {
	w := newWS(t, "none")
	writeHostFile(t, filepath.Join(w.Dir(), "b.bin"), "a\x00b")
	if _, err := w.EditFile("nope.go", "a", "b", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := w.EditFile("b.bin", "a", "b", false); !errors.Is(err, ErrBinary) {
		t.Errorf("binary: %v", err)
	}
}

func TestPreview(t *testing.T) {
	w := newWS(t, "none")
	p := filepath.Join(w.Dir(), "f.txt")
	const orig = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	writeHostFile(t, p, orig)

	d, err := w.PreviewEdit("f.txt", "five", "FIVE", false)
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n two\n three\n four\n-five\n+FIVE\n six\n seven\n eight\n"
	if d != want {
		t.Errorf("PreviewEdit:\n%s\nwant:\n%s", d, want)
	}
	if _, err := w.PreviewEdit("f.txt", "zzz", "y", false); !errors.Is(err, ErrNoMatch) {
		t.Errorf("PreviewEdit not found: %v", err)
	}

	d, err = w.PreviewWrite("new/g.txt", "a\nb\n")
	if err != nil || d != "--- /dev/null\n+++ b/new/g.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n" {
		t.Errorf("PreviewWrite new = %q, %v", d, err)
	}
	if fileExists(filepath.Join(w.Dir(), "new")) {
		t.Error("PreviewWrite created something")
	}

	d, err = w.PreviewWrite("f.txt", "one\ntwo\n")
	if err != nil || !strings.Contains(d, "@@ -1,9 +1,2 @@") || !strings.Contains(d, "-nine\n") {
		t.Errorf("PreviewWrite shrink = %q, %v", d, err)
	}
	big := strings.Repeat("new line of text\n", 2000)
	d, err = w.PreviewWrite("f.txt", big)
	if err != nil || len(d) > MaxPreviewChars || !strings.Contains(d, "more lines]") {
		t.Errorf("big preview: %d chars, %v", len(d), err)
	}
	if b, _ := os.ReadFile(p); string(b) != orig {
		t.Errorf("preview changed the file: %q", b)
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var a, b []string
	for i := 1; i <= 30; i++ {
		a = append(a, fmt.Sprint(i))
		b = append(b, fmt.Sprint(i))
	}
	b[1], b[27] = "two", "twenty-eight"
	d := unifiedDiff("n", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", false)
	if strings.Count(d, "@@ -") != 2 || !strings.Contains(d, "@@ -1,5 +1,5 @@") || !strings.Contains(d, "@@ -25,6 +25,6 @@") {
		t.Errorf("hunks:\n%s", d)
	}
	if got := unifiedDiff("n", "x\n", "x\n", false); !strings.Contains(got, "no changes") {
		t.Errorf("same content: %q", got)
	}
}

package bot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every shared name becomes one that stays in the attachments folder,
// is valid UTF-8, fits a file system and keeps its extension; names
// that were already fine are kept.
func TestSafeName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) + ".png" // 304 bytes
	for in, want := range map[string]string{
		"report.pdf":       "report.pdf",
		".env":             ".env",
		"..":               "..",
		"../../etc/passwd": ".._.._etc_passwd",
		`C:\temp\a.txt`:    "C:_temp_a.txt",
		"a\nb\x00c.txt":    "a_b_c.txt",
		"bad\xffname":      "bad_name",
		"":                 "file",
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
	got := safeName(long)
	if len(got) > maxNameBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "é.png") {
		t.Errorf("a long name became %q (%d bytes)", got, len(got))
	}
}

// Two files of one message never land on the same path.
func TestAttachmentNamesAreUniquePerMessage(t *testing.T) {
	t.Parallel()
	b := &Bot{}
	take, refused := b.attachments("1700000000.000100", []sharedFile{
		{Name: "notes.txt", URL: "https://files/1"},
		{Name: "notes.txt", URL: "https://files/2"},
		{Name: "a/b.txt", URL: "https://files/3"},
		{Name: "a_b.txt", URL: "https://files/4"},
	})
	if len(refused) != 0 || len(take) != 4 {
		t.Fatalf("took %d, refused %v", len(take), refused)
	}
	want := []string{"notes.txt", "notes-2.txt", "a_b.txt", "a_b-2.txt"}
	for i, a := range take {
		if w := ".h9/attachments/1700000000.000100-" + want[i]; a.Path != w {
			t.Errorf("file %d at %s, want %s", i, a.Path, w)
		}
	}
}

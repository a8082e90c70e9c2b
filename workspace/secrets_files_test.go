package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file setup wrote with a secret in it (an .npmrc) is the agent's to
// read, but what read_file and the step previews give it, and so what h9
// stores and shows in the thread, has the value replaced by its name.
func TestFileToolsScrubSetupSecrets(t *testing.T) {
	const token = "npm_Secret_Value_0123456789"
	m := newManagerWith(t, Config{Sandbox: "none", Secrets: []Secret{{Name: "NPM_TOKEN", Value: token}}})
	w := openWS(t, m, "s")
	if err := os.WriteFile(filepath.Join(w.Dir(), ".npmrc"), []byte("//registry.npmjs.org/:_authToken="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read, err := w.ReadFile(".npmrc", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	write, err := w.PreviewWrite(".npmrc", "registry=https://example.test/\n")
	if err != nil {
		t.Fatal(err)
	}
	edit, err := w.PreviewEdit(".npmrc", "_authToken", "_auth", false)
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]string{"read_file": read, "write preview": write, "edit preview": edit} {
		if strings.Contains(got, token) || !strings.Contains(got, "[REDACTED:NPM_TOKEN]") {
			t.Errorf("%s shows:\n%s", what, got)
		}
	}
}

// A value cut across writes is still scrubbed; what could start one is
// held back until Flush.
func TestScrubWriterAcrossWrites(t *testing.T) {
	var out strings.Builder
	w := NewScrubWriter(&out, []Secret{{Name: "T", Value: "secret-value-123"}, {Name: "U", Value: "other-9876543"}})
	for _, p := range []string{"a secr", "et-value-1", "23 and other-98", "76543 then secret-v"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "a [REDACTED:T] and [REDACTED:U] then secret-v"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSharedPackDescriptorsDoNotReachCommands: the directory descriptors bwrap gets for
// a checkout's borrowed packs must not reach the command: a host directory
// descriptor lets ".." climb out of the view.
func TestSharedPackDescriptorsDoNotReachCommands(t *testing.T) {
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "h9.db"), []byte("SECRET-IN-DB\n"), 0o600)
	m := newManagerWith(t, Config{Sandbox: "bwrap", Root: filepath.Join(data, "workspaces"), Hidden: []string{data}})
	w := openWS(t, m, "me")
	pack := filepath.Join(w.Dir(), ".git", "objects", "pack")
	os.MkdirAll(pack, 0o755)
	cache := filepath.Join(data, "cache.pack")
	os.WriteFile(cache, []byte("pack"), 0o444)
	if err := os.Link(cache, filepath.Join(pack, "p.pack")); err != nil {
		t.Fatal(err)
	}
	for _, plan := range []bool{false, true} {
		r, err := w.run(context.Background(), "ls -l /proc/self/fd; for f in /proc/self/fd/*; do ls $f/../../../.. 2>/dev/null; done; cat /proc/self/fd/*/../../../../h9.db 2>/dev/null; echo x >> .git/objects/pack/p.pack; chmod u+w .git/objects/pack/p.pack; cat .git/objects/pack/p.pack", BashOptions{ReadOnly: plan})
		t.Logf("plan=%v %s %v", plan, r.String(), err)
		b, _ := os.ReadFile(cache)
		if string(b) != "pack" {
			t.Errorf("cache pack changed: %q", b)
		}
	}
}

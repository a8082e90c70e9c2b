package workspace

import (
	"context"
	"path/filepath"
	"testing"
)

func TestVerify(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			if sb == "bwrap" {
				needBwrap(t)
			}
			data := t.TempDir()
			m, err := NewManager(Config{Root: filepath.Join(data, "workspaces"), Sandbox: sb, Hidden: []string{data}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range m.Verify(context.Background()) {
				t.Logf("%+v", c)
				if !c.OK && !c.Skipped {
					t.Errorf("%s failed: %s", c.Name, c.Detail)
				}
			}
		})
	}
}

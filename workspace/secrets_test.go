package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// A host key created after the Manager started (sshd's first start, a key
// rotation) is as unreadable as one that existed before, in every mode
// the kernel confines: the cover list is worked out for every command.
func TestHostKeyCreatedAfterStartIsCovered(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to write under /etc/ssh")
	}
	for _, mode := range confinedModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			m := newManager(t, mode.sandbox)
			if mode.sandbox == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			if err := os.MkdirAll("/etc/ssh", 0o755); err != nil {
				t.Fatal(err)
			}
			key := filepath.Join("/etc/ssh", "ssh_host_h9test"+filepath.Base(t.TempDir())+"_key")
			if err := os.WriteFile(key, []byte("PRIVATE-HOST-KEY\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(key) })
			r := mustRun(t, w, "cat "+key+"; ls /etc/ssh", BashOptions{ReadOnly: mode.plan})
			if strings.Contains(r.Output, "PRIVATE-HOST-KEY") {
				t.Errorf("a host key created after start was read: %+v", r)
			}
		})
	}
}

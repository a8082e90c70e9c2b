package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// TestInheritedDescriptorsDoNotReachCommands: a descriptor h9
// inherited without close-on-exec (from a supervisor, a shell, a socket
// activation) must not reach a sandboxed command, which could read the
// file behind it although the view hides it.
func TestInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, mode := range []struct {
		sandbox string
		plan    bool
	}{{"bwrap", false}, {"bwrap", true}, {"none", true}} {
		t.Run(mode.sandbox+strconv.FormatBool(mode.plan), func(t *testing.T) {
			data := t.TempDir()
			secret := filepath.Join(data, "h9.db")
			if err := os.WriteFile(secret, []byte("SECRET-IN-DB\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			m := newManagerWith(t, Config{Sandbox: mode.sandbox, Root: filepath.Join(data, "workspaces"), Hidden: []string{data}})
			w := openWS(t, m, "me")
			fd, err := syscall.Open(secret, syscall.O_RDONLY, 0) // no O_CLOEXEC: as inherited
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)
			cmd := "cat /proc/self/fd/" + strconv.Itoa(fd) + " <&" + strconv.Itoa(fd) + "; cat <&" + strconv.Itoa(fd)
			r, err := w.run(context.Background(), cmd, BashOptions{ReadOnly: mode.plan})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(r.Output, "SECRET-IN-DB") {
				t.Errorf("a command read a hidden file through a descriptor h9 inherited (fd %d):\n%s", fd, r.Output)
			}
		})
	}
}

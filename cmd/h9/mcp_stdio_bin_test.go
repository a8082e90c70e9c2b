package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent/fakemodel"
)

// The real binary in the Landlock execution mode with a stdio MCP server:
// the server answers in the session's sandbox, its process outlives the
// run (the session is not idle yet), and it is gone when h9 stops — on
// SIGTERM through Close, on SIGKILL through the launcher's control pipe.
func TestBinaryStdioServerLifetime(t *testing.T) {
	testenv.Need(t, "landlock:1")
	dir := t.TempDir()
	server := filepath.Join(dir, "stdioserver")
	if out, err := exec.Command("go", "build", "-o", server, "../../agent/mcp/testdata/stdioserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "mcp.yml")
	if err := os.WriteFile(file, []byte("servers:\n  - name: local\n    command: "+server+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newBinEnv(t, "H9_MCP_FILE="+file, "H9_SANDBOX=landlock", "H9_SANDBOX_RO_PATHS="+dir)
	for _, stop := range []func(){e.stop, e.kill} {
		e.start()
		e.model.Enqueue(fakemodel.ToolCall("local__echo", `{"text":"from the sandbox"}`), fakemodel.Text("Echoed."))
		thread := e.slash("run echo something")
		e.waitMsg(thread, "Echoed.", 1)
		if !modelSaw(e, "echo: from the sandbox") {
			t.Fatal("the stdio server's answer never reached the model")
		}
		if n := processesOf(server); n != 1 {
			t.Fatalf("%d stdio server processes after the run, want the session's one", n)
		}
		stop()
		e.waitFor("the stdio server gone", func() bool { return processesOf(server) == 0 })
	}
}

// processesOf counts the processes running path (not the launchers whose
// arguments name it).
func processesOf(path string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, ent := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), path+"\x00") {
			n++
		}
	}
	return n
}

func modelSaw(e *binEnv, s string) bool {
	for _, body := range e.model.Bodies() {
		if strings.Contains(string(body), s) {
			return true
		}
	}
	return false
}

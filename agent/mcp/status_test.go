package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/planning"
)

// doctor's check starts each stdio server once, as a session would, and
// reports its tool count or why it failed (with its stderr), then stops
// it: no process is left once Check returns.
func TestCheckStartsStdioServers(t *testing.T) {
	stdio := func(name, command string) mcp.Server {
		return mcp.Server{ServerConfig: mcp.ServerConfig{Name: name, Command: command}}
	}
	h := newHarness(t, "bwrap", []mcp.Server{
		stdio("local", "./.mcp/stdioserver"),
		stdio("missing", "/nonexistent/h9-mcp-server --stdio"),
		stdio("talker", "echo 'hello, I am not an MCP server'; echo 'talker: no configuration found' >&2; exit 3"),
		stdio("repofile", "./tools/docs-mcp"),
	}, 0)
	dir, err := h.wsm.Path("s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	buildStdioServer(t, filepath.Join(dir, ".mcp"))
	var opened atomic.Int32 // Check starts the servers side by side
	open := func() (*workspaceT, error) { opened.Add(1); return h.wsm.Open("s1") }

	st := h.mgr.Check(context.Background(), 30*time.Second, open)
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes left after Check", n)
	}
	for _, s := range st {
		t.Logf("%v %s (%s): %s", s.OK, s.Name, s.Kind, s.Line)
	}
	byName := map[string]mcp.Status{}
	for _, s := range st {
		byName[s.Name] = s
	}
	set := h.mgr.Tools(context.Background(), mcp.Scope{SessionID: "s1", Mode: planning.PlanModeDefault, Workspace: workspaceOf(h, "s1")})
	offered := len(toolNames(set))
	set.Close()
	if offered < 2 {
		t.Fatalf("a session was offered %d tools", offered)
	}
	want := map[string]struct {
		ok    bool
		words []string
	}{
		"local":    {true, []string{fmt.Sprintf(`stdio server "./.mcp/stdioserver", %d tools;`, offered), "idle for 5m0s"}},
		"missing":  {false, []string{": did not answer as an MCP server", "No such file or directory"}},
		"talker":   {false, []string{": did not answer as an MCP server", "talker: no configuration found"}},
		"repofile": {true, []string{"not started: ./tools/docs-mcp is a path in the session's workspace"}},
	}
	for name, w := range want {
		s := byName[name]
		if s.OK != w.ok {
			t.Errorf("%s: OK %v, want %v: %s", name, s.OK, w.ok, s.Line)
		}
		for _, word := range w.words {
			if !strings.Contains(s.Line, word) {
				t.Errorf("%s: %q lacks %q", name, s.Line, word)
			}
		}
	}
	if n := opened.Load(); n != 4 {
		t.Errorf("%d workspaces opened for 4 stdio servers", n)
	}
}

// A stdio server that never answers initialize is reported at doctor's
// deadline, and stopped.
func TestCheckStdioServerThatHangs(t *testing.T) {
	h := newHarness(t, "bwrap", []mcp.Server{{ServerConfig: mcp.ServerConfig{Name: "mute", Command: "exec sleep 599.25"}}}, 0)
	st := h.mgr.Check(context.Background(), time.Second, func() (*workspaceT, error) { return h.wsm.Open("probe") })
	if len(st) != 1 || st[0].OK || !strings.Contains(st[0].Line, "no answer within 1s") {
		t.Errorf("a server that never answers: %+v", st)
	}
	if n := processesNaming("599.25"); n != 0 {
		t.Errorf("%d processes of the mute server left after Check", n)
	}
}

// processesNaming counts the processes whose command line has arg (bwrap's
// and the launcher's too).
func processesNaming(arg string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), arg) {
			n++
		}
	}
	return n
}

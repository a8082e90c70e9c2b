package mcp_test

import (
	"context"
	"github.com/h9-app/h9/workspace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/planning"
)

// needBwrap follows the repository's convention: skip without bubblewrap
// unless CI is set.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but bwrap is missing: %v", err)
		}
		t.Skipf("bwrap not installed (apt-get install bubblewrap): %v", err)
	}
}

// buildStdioServer builds ./testdata/stdioserver into dir.
func buildStdioServer(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "stdioserver")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/stdioserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// stdioHarness is a harness under bwrap whose session "s1" has the stdio
// server's binary in its workspace, run as the command ./.mcp/stdioserver.
func stdioHarness(t *testing.T) *harness {
	needBwrap(t)
	h := newHarness(t, "bwrap", []mcp.Server{{ServerConfig: mcp.ServerConfig{Name: "local", Command: "./.mcp/stdioserver"}}}, 0)
	dir, err := h.wsm.Path("s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	buildStdioServer(t, filepath.Join(dir, ".mcp"))
	return h
}

func TestStdioServerInTheSandbox(t *testing.T) {
	t.Setenv("TEAM_TOKEN", token) // in h9's environment: never in the server's
	h := stdioHarness(t)
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{},
		call("local__echo", `{"text":"from the sandbox"}`), call("local__env", `{}`), fakemodel.Text("done"))
	if tools := h.offered(0); !has(tools, "local__echo") || !has(tools, "local__note") || has(tools, "local__bad_type") {
		t.Errorf("offered %v", tools)
	}
	got := h.toolResults()
	if len(got) != 2 || got[0] != "echo: from the sandbox" {
		t.Fatalf("results %q", got)
	}
	dir, _ := h.wsm.Path("s1")
	env := got[1]
	if !strings.Contains(env, "cwd="+dir) || strings.Contains(env, token) || strings.Contains(env, "TEAM_TOKEN") {
		t.Errorf("the stdio server's environment:\n%s", env)
	}
	if h.calls.get("stdio ok") != 2 {
		t.Errorf("metrics: %v", h.calls.n)
	}
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes left after the run ended", n)
	}

	// Plan mode: read-only tools, and a workspace the server cannot write.
	h.run("s1", planning.PlanModePlan, agent.RunOptions{}, call("local__echo", `{"text":"plan"}`), fakemodel.Text("a plan"))
	if tools := h.offered(len(h.model.Requests()) - 1); has(tools, "local__note") || !has(tools, "local__echo") {
		t.Errorf("plan mode offered %v", tools)
	}
	if got := h.toolResults(); got[len(got)-1] != "echo: plan" {
		t.Errorf("plan-mode call: %q", got)
	}
}

func TestStdioToolListChangesMidSession(t *testing.T) {
	h := stdioHarness(t)
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__add_tool", `{"text":"later"}`), fakemodel.Text("done"))
	if has(h.offered(0), "local__later") {
		t.Fatal("offered before it existed")
	}
	// The process that changed its list was stopped with the run; the next
	// run lists again (a fresh process does not have the added tool, which
	// lived in the old one's memory, so the list is what the server says now).
	set := h.mgr.Tools(context.Background(), mcp.Scope{SessionID: "s1", Mode: planning.PlanModeDefault, Workspace: workspaceOf(h, "s1")})
	defer set.Close()
	if has(toolNames(set), "local__later") || !has(toolNames(set), "local__echo") {
		t.Errorf("after list_changed the list is %v", toolNames(set))
	}
}

func workspaceOf(h *harness, id string) func() (*workspaceT, error) {
	return func() (*workspaceT, error) { return h.wsm.Open(id) }
}

// stdioProcesses counts running processes of the test server's binary.
func stdioProcesses(t testing.TB) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), ".mcp/stdioserver") && !strings.Contains(string(b), "bwrap") {
			n++
		}
	}
	return n
}

type workspaceT = workspace.Workspace

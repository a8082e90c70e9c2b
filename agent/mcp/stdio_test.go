package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/planning"
)

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

// stdioHarness is a harness in the sandbox mode given ("bwrap" or
// "landlock") whose session "s1" has the stdio server's binary in its
// workspace, run as the command ./.mcp/stdioserver.
func stdioHarness(t *testing.T, sandbox string, tune ...func(*mcp.Options, *agent.Config)) *harness {
	h := newHarness(t, sandbox, []mcp.Server{{ServerConfig: mcp.ServerConfig{Name: "local", Command: "./.mcp/stdioserver"}}}, 0, tune...)
	if string(h.wsm.Level()) != sandbox {
		t.Fatalf("sandbox level %s, want %s", h.wsm.Level(), sandbox)
	}
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
	for _, sandbox := range []string{"bwrap", "landlock"} {
		t.Run(sandbox, func(t *testing.T) { testStdioServerIn(t, sandbox) })
	}
}

func testStdioServerIn(t *testing.T, sandbox string) {
	t.Setenv("TEAM_TOKEN", token) // in h9's environment: never in the server's
	h := stdioHarness(t, sandbox)
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

	// Plan mode: read-only tools, and a workspace the server cannot write.
	h.run("s1", planning.PlanModePlan, agent.RunOptions{}, call("local__echo", `{"text":"plan"}`), fakemodel.Text("a plan"))
	if tools := h.offered(len(h.model.Requests()) - 1); has(tools, "local__note") || !has(tools, "local__echo") {
		t.Errorf("plan mode offered %v", tools)
	}
	if got := h.toolResults(); got[len(got)-1] != "echo: plan" {
		t.Errorf("plan-mode call: %q", got)
	}
	h.mgr.Close()
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes left after the manager closed", n)
	}
}

// A session's stdio server is one process across the session's runs,
// stopped once the session is idle; a cancelled run stops it at once, and
// Close (h9 stopping) stops every one.
func TestStdioServerLifetime(t *testing.T) {
	h := stdioHarness(t, "bwrap", func(o *mcp.Options, _ *agent.Config) { o.StdioIdle = 2 * time.Second })
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__instance", `{}`), fakemodel.Text("done"))
	first := h.toolResults()[0]
	if n := stdioProcesses(t); n != 1 {
		t.Fatalf("%d stdio server processes right after the run, want the session's one kept", n)
	}
	if st := h.mgr.Check(context.Background(), time.Second, nil); !strings.Contains(st[0].Line, "running for 1 session") || !strings.Contains(st[0].Line, "idle for 2s") {
		t.Errorf("doctor's line: %q", st[0].Line)
	}
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__instance", `{}`), fakemodel.Text("done"))
	if again := h.toolResults()[1]; again != first || !strings.HasPrefix(first, "instance ") {
		t.Errorf("the second run reached %q, the first %q: want the same process", again, first)
	}
	if !eventually(func() bool { return stdioProcesses(t) == 0 }) {
		t.Fatal("the idle session's stdio server was never stopped")
	}

	// A cancelled run: the server goes with the session's commands.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.model.Enqueue(call("local__hang", `{}`))
	_, err := h.eng.Run(ctx, "s1", agent.Request{Intent: agent.IntentTask, Text: "hang"}, agent.RunOptions{
		Events: func(ev agent.Event) {
			if ev.Kind == agent.EventToolStarted && ev.Tool == "local__hang" {
				cancel()
			}
		},
	})
	if err == nil {
		t.Fatal("the cancelled run succeeded")
	}
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes after the run was cancelled", n)
	}

	// The session cancelled between runs (the Cancel button).
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__echo", `{"text":"x"}`), fakemodel.Text("done"))
	if n := stdioProcesses(t); n != 1 {
		t.Fatalf("%d stdio server processes after the run, want 1", n)
	}
	if _, err := h.eng.CancelOpenTodos(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes after the session was cancelled", n)
	}

	// h9 stopping: Close stops a kept one.
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__echo", `{"text":"x"}`), fakemodel.Text("done"))
	if n := stdioProcesses(t); n != 1 {
		t.Fatalf("%d stdio server processes after the run, want 1 (results %q)", n, h.toolResults())
	}
	h.mgr.Close()
	if n := stdioProcesses(t); n != 0 {
		t.Errorf("%d stdio server processes after Close", n)
	}
}

func TestStdioToolListChangesMidSession(t *testing.T) {
	h := stdioHarness(t, "bwrap")
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__add_tool", `{"text":"later"}`), fakemodel.Text("done"))
	if has(h.offered(0), "local__later") {
		t.Fatal("offered before it existed")
	}
	// The session's process, kept across runs, said its list changed
	// (the SDK sends that a moment after the change): the next run lists
	// again and offers the new tool, which answers.
	if !eventually(func() bool {
		set := h.mgr.Tools(context.Background(), mcp.Scope{SessionID: "s1", Mode: planning.PlanModeDefault, Workspace: workspaceOf(h, "s1")})
		defer set.Close()
		return has(toolNames(set), "local__later")
	}) {
		t.Fatal("notifications/tools/list_changed did not refresh the list")
	}
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("local__later", `{}`), fakemodel.Text("done"))
	if !has(h.offered(len(h.model.Requests())-2), "local__later") {
		t.Fatalf("after notifications/tools/list_changed the next run was offered %v", h.offered(len(h.model.Requests())-2))
	}
	if got := h.toolResults(); got[len(got)-1] != "I am later" {
		t.Errorf("the new tool answered %q", got)
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
		// bwrap's and the launcher's (h9-sandbox) arguments name it too.
		if err == nil && strings.Contains(string(b), ".mcp/stdioserver") && !strings.Contains(string(b), "bwrap") && !strings.Contains(string(b), "h9-sandbox") {
			n++
		}
	}
	return n
}

type workspaceT = workspace.Workspace

// A stdio server that dies in a call is a tool error with its own words
// (its stderr), and the next call starts it again; one that hangs is a
// tool error at the call's deadline (H9_MCP_TIMEOUT).
func TestStdioServerCrashesAndHangs(t *testing.T) {
	h := stdioHarness(t, "bwrap", func(o *mcp.Options, _ *agent.Config) { o.CallTimeout = 700 * time.Millisecond })
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{},
		call("local__crash", `{}`), call("local__echo", `{"text":"back"}`), call("local__hang", `{}`), fakemodel.Text("done"))
	got := h.toolResults()
	if len(got) != 3 {
		t.Fatalf("results %q", got)
	}
	if !strings.HasPrefix(got[0], "Error: MCP server local failed") || !strings.Contains(got[0], "the issue tracker's database is gone") {
		t.Errorf("a crashed server: %q", got[0])
	}
	if got[1] != "echo: back" {
		t.Errorf("the call after the crash: %q", got[1])
	}
	if !strings.Contains(got[2], "did not answer within 700ms") {
		t.Errorf("a hanging server: %q", got[2])
	}
	if h.calls.get("stdio failed") != 1 || h.calls.get("stdio timeout") != 1 || h.calls.get("stdio ok") != 1 {
		t.Errorf("metrics: %v", h.calls.n)
	}
}

// A stdio server that does not start leaves its tools out, with a log line
// carrying its words, and the session's next runs do not wait for it to
// fail again (stdioRetry).
func TestStdioServerThatDoesNotStart(t *testing.T) {
	h := newHarness(t, "bwrap", []mcp.Server{{ServerConfig: mcp.ServerConfig{Name: "local", Command: "./.mcp/missing-server"}}}, 0)
	for range 2 {
		h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, fakemodel.Text("done"))
		for _, tl := range h.offered(len(h.model.Requests()) - 1) {
			if strings.HasPrefix(tl, "local__") {
				t.Errorf("a server that did not start has its tool %s offered", tl)
			}
		}
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "MCP stdio server did not start"); n != 1 {
		t.Errorf("%d start failures logged for two runs, want 1 (the second run waits for none):\n%s", n, logs)
	}
	if !strings.Contains(logs, "missing-server") || !strings.Contains(logs, "No such file") {
		t.Errorf("the log line does not carry the shell's words:\n%s", logs)
	}
}

package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/mcp/mcptest"
	"github.com/h9-app/h9/planning"
)

// newRemote starts the test server; it closes after the manager (cleanups
// run last-in first-out), which ends its event stream first.
func newRemote(t *testing.T) *mcptest.Remote {
	srv := mcptest.NewRemote(token)
	t.Cleanup(srv.Close)
	return srv
}

func remoteServer(t *testing.T, url string, tune ...func(*mcp.ServerConfig)) []mcp.Server {
	t.Helper()
	c := mcp.ServerConfig{Name: "team", URL: url, HeadersEnv: map[string]string{"Authorization": "TEAM_TOKEN"}}
	for _, f := range tune {
		f(&c)
	}
	yaml := "servers:\n- name: " + c.Name + "\n  url: " + c.URL + "\n  headers_env: {Authorization: TEAM_TOKEN}\n"
	if len(c.Channels) > 0 {
		yaml += "  channels: [" + strings.Join(c.Channels, ", ") + "]\n"
	}
	if len(c.Repos) > 0 {
		yaml += "  repos: [" + strings.Join(c.Repos, ", ") + "]\n"
	}
	if len(c.Tools) > 0 {
		yaml += "  tools: [" + strings.Join(c.Tools, ", ") + "]\n"
	}
	servers, err := mcp.Parse([]byte(yaml), func(k string) (string, bool) {
		if k == "TEAM_TOKEN" {
			return "Bearer " + token, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	return servers
}

func TestRemoteToolsPerModeAndRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0)
	h.mgr.Start()

	results := h.run("s1", planning.PlanModeDefault, agent.RunOptions{},
		call("team__echo", `{"text":"héllo"}`), call("team__leak", `{}`), call("team__picture", `{}`), fakemodel.Text("done"))
	tools := h.offered(0)
	for _, want := range []string{"read_file", "bash", "team__echo", "team__note", "team__read_file", "team__huge"} {
		if !has(tools, want) {
			t.Errorf("execution mode does not offer %s: %v", want, tools)
		}
	}
	for _, refused := range []string{"team__bad_type", "team__ext_ref", "team__huge_schema"} {
		if has(tools, refused) {
			t.Errorf("%s has a schema the model API refuses, yet it is offered", refused)
		}
	}
	if !strings.Contains(h.logs.String(), "bad_type") || !strings.Contains(h.logs.String(), "ext_ref") {
		t.Errorf("no log line says why tools were left out:\n%s", h.logs.String())
	}
	got := h.toolResults()
	if len(got) != 3 || got[0] != "echo: héllo" {
		t.Fatalf("tool results = %q", got)
	}
	if !strings.Contains(got[1], "[REDACTED:TEAM_TOKEN]") {
		t.Errorf("a server echoing the header is not scrubbed: %q", got[1])
	}
	if !strings.Contains(got[2], "a chart") || !strings.Contains(got[2], "[image: image/png") {
		t.Errorf("image result = %q", got[2])
	}
	for _, ev := range results {
		if ev.IsError || strings.Contains(ev.Output, token) {
			t.Errorf("event %s: error=%v output %q", ev.Tool, ev.IsError, ev.Output)
		}
	}
	if h.calls.get("remote ok") != 3 {
		t.Errorf("metrics: %v", h.calls.n)
	}

	h.run("s2", planning.PlanModePlan, agent.RunOptions{}, fakemodel.Text("a plan"))
	plan := h.offered(len(h.model.Requests()) - 1)
	if !has(plan, "team__echo") || has(plan, "team__note") || has(plan, "team__add_tool") {
		t.Errorf("plan mode offers %v: want the read-only tools only", plan)
	}
	h.noToken()
	if srv.Requests.Load() == 0 {
		t.Fatal("the server saw no request with the token")
	}
}

// The call timeout is long enough for the huge result to arrive on a busy
// machine under the race detector (700ms was not), and the hanging call
// waits it out: the test is not run in parallel with others.
func TestRemoteHostileAndFailingServer(t *testing.T) {
	srv := newRemote(t)
	const callTimeout = 3 * time.Second
	h := newHarness(t, "none", remoteServer(t, srv.URL), callTimeout)
	h.mgr.Start()
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{},
		call("team__huge", `{}`), call("team__hang", `{}`), call("team__fail", `{}`), call("team__echo", `[1]`),
		call("read_file", `{"path":"nothing.txt"}`), call("team__read_file", `{}`), fakemodel.Text("done"))
	got := h.toolResults()
	if len(got) != 6 {
		t.Fatalf("results %q", got)
	}
	if len(got[0]) > 30_000 || !strings.HasPrefix(got[0], "HEAD") || !strings.HasSuffix(got[0], "TAIL") || !strings.Contains(got[0], "bytes omitted") {
		t.Errorf("a huge result is not cut like bash output: %d bytes, %.60q…%q", len(got[0]), got[0], got[0][len(got[0])-40:])
	}
	if !strings.Contains(got[1], "did not answer within "+callTimeout.String()) {
		t.Errorf("a hanging call: %q", got[1])
	}
	if !strings.Contains(got[2], "the tracker is read-only today") || !strings.HasPrefix(got[2], "Error:") {
		t.Errorf("a tool error is not the server's words as an error: %q", got[2])
	}
	if !strings.Contains(got[3], "not a JSON object") {
		t.Errorf("bad arguments: %q", got[3])
	}
	if strings.Contains(got[4], "server's read_file") || !strings.Contains(got[5], "server's read_file") {
		t.Errorf("the built-in read_file is shadowed: %q / %q", got[4], got[5])
	}
	if h.calls.get("remote timeout") != 1 || h.calls.get("remote tool_error") != 1 {
		t.Errorf("metrics: %v", h.calls.n)
	}
	// The server still answers after the hung call.
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("team__echo", `{"text":"again"}`), fakemodel.Text("done"))
	if got := h.toolResults(); got[len(got)-1] != "echo: again" {
		t.Errorf("after a hung call: %q", got)
	}
}

func TestRemoteDownThenUp(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	srv.Down.Store(true)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0)
	h.mgr.Start()
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("team__echo", `{"text":"x"}`), fakemodel.Text("done"))
	if has(h.offered(0), "team__echo") {
		t.Fatal("a server that is down had its tools offered")
	}
	if got := h.toolResults(); !strings.Contains(got[0], "unknown tool") {
		t.Errorf("calling a tool of a server that is down: %q", got)
	}
	st := h.mgr.Check(context.Background(), time.Second, nil)
	if st[0].OK || !strings.Contains(st[0].Line, "not connected") || !strings.Contains(st[0].Line, "Service Unavailable") {
		t.Errorf("doctor's line for a server that is down: %+v", st[0])
	}
	srv.Down.Store(false)
	if !eventually(func() bool { return has(toolNames(h.mgr.Tools(context.Background(), mcp.Scope{})), "team__echo") }) {
		t.Fatal("the server answers again but its tools are never offered")
	}
	st = h.mgr.Check(context.Background(), time.Second, nil)
	if !st[0].OK || !strings.Contains(st[0].Line, "connected") {
		t.Errorf("doctor: %+v", st[0])
	}
	h.noToken()
}

func TestRemoteToolListChanges(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0)
	h.mgr.Start()
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("team__add_tool", `{"text":"fresh"}`), fakemodel.Text("done"))
	if has(h.offered(0), "team__fresh") {
		t.Fatal("offered before it existed")
	}
	if !eventually(func() bool {
		return has(toolNames(h.mgr.Tools(context.Background(), mcp.Scope{})), "team__fresh")
	}) {
		t.Fatal("notifications/tools/list_changed did not refresh the list")
	}
	h.run("s1", planning.PlanModePlan, agent.RunOptions{}, call("team__fresh", `{}`), fakemodel.Text("done"))
	if got := h.toolResults(); got[len(got)-1] != "I am fresh" {
		t.Errorf("the new tool: %q", got)
	}
}

func TestScopeNarrowsServersAndTools(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	servers := remoteServer(t, srv.URL, func(c *mcp.ServerConfig) {
		c.Channels, c.Repos, c.Tools = []string{"C123"}, []string{"acme/api"}, []string{"echo", "read_file"}
	})
	h := newHarness(t, "none", servers, 0)
	h.mgr.Start()
	ctx := context.Background()
	cases := []struct {
		scope mcp.Scope
		want  []string
	}{
		{mcp.Scope{Channel: "C123", Repo: "acme/api"}, []string{"team__echo", "team__read_file"}},
		{mcp.Scope{Channel: "C999", Repo: "acme/api"}, nil},
		{mcp.Scope{Channel: "C123", Repo: "acme/web"}, nil},
		{mcp.Scope{Channel: "C123"}, nil},
	}
	for _, c := range cases {
		got := toolNames(h.mgr.Tools(ctx, c.scope))
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("scope %+v: offered %v, want %v", c.scope, got, c.want)
		}
	}
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{Channel: "C123", Repo: "acme/api"}, fakemodel.Text("done"))
	if tools := h.offered(0); !has(tools, "team__echo") || has(tools, "team__note") {
		t.Errorf("the run in scope was offered %v", tools)
	}
}

func TestConfirmEachStepPreviewsMCPCalls(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0)
	h.mgr.Start()
	var asked []agent.ApprovalRequest
	approve := func(_ context.Context, req agent.ApprovalRequest) (bool, error) {
		asked = append(asked, req)
		return req.Tool != "team__add_tool", nil
	}
	h.run("s1", planning.PlanModeAutoEdit, agent.RunOptions{Approve: approve},
		call("team__note", `{"text":"ship it"}`), call("team__add_tool", `{"text":"x"}`), call("team__echo", `{"text":"r"}`), fakemodel.Text("done"))
	if len(asked) != 2 || asked[0].Tool != "team__note" || !strings.Contains(asked[0].Preview, `"text": "ship it"`) ||
		!strings.Contains(asked[0].Preview, "MCP tool note of server team") || asked[0].Summary != "ship it" {
		t.Fatalf("approvals asked: %+v", asked)
	}
	got := h.toolResults()
	if got[0] != "noted" || !strings.Contains(got[1], "rejected") || got[2] != "echo: r" {
		t.Errorf("results: %q", got)
	}
}

func toolNames(set mcp.Set) []string {
	var out []string
	for _, tl := range set.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// eventually polls cond until it holds or half a minute passed: the
// server's notification and the reconnection backoff are asynchronous.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

package main

import (
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// A /h9 plan through the real h9, with one 429 from Slack and one from the
// model: every metric the flow must move has moved, by the right amount
// where the flow fixes it, and every name is h9's.
func TestMetricsFollowAPlanFlow(t *testing.T) {
	e := startObserved(t)
	e.waitFor("/readyz to say ready", func() bool { return e.status("/readyz") == 200 })
	before := e.scrape()
	checkNames(t, before)
	for _, series := range [][]string{
		{"h9_lease_changes_total", "change", "taken_over"}, {"h9_lease_changes_total", "change", "lost"},
		{"h9_runs_total", "outcome", "ok"}, {"h9_model_errors_total", "kind", "rate_limit"},
		{"h9_envelopes_total", "type", "slash_commands"}, {"h9_sessions_created_total"},
	} {
		if v := before.value(series[0], series[1:]...); v != 0 {
			t.Errorf("before any work, %v = %v, want a series at 0", series, v)
		}
	}
	if v := before.value("h9_socket_connected"); v != 1 {
		t.Errorf("h9_socket_connected = %v while connected, want 1", v)
	}

	e.model.Enqueue(fakemodel.RateLimited(10*time.Millisecond),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:pending", "b:pending")),
		fakemodel.Text("The plan is ready."))
	e.slack.RateLimit("chat.postMessage", 1, time.Second)
	ack, err := e.slack.SlashCommand(e.ctx, fakeslack.SlashCommand{Text: "plan add a health check", UserID: "U1", ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("the plan's review", func() bool { return posted(e.slack, render.BlockReviewActions) })
	e.waitFor("the run's end counted", func() bool { return e.scrape().value("h9_runs_total", "outcome", "ok") == 1 })
	if _, err := e.slack.Redeliver(e.ctx, ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the redelivery counted", func() bool {
		return e.scrape().value("h9_envelopes_duplicate_total", "type", "slash_commands") == 1
	})

	m := e.scrape()
	checkNames(t, m)
	checkPlanFlow(t, m)
}

// checkPlanFlow: what one /h9 plan (delivered twice) with a 429 from
// Slack's chat.postMessage and one from the model moved.
func checkPlanFlow(t *testing.T, m scraped) {
	t.Helper()
	exactly := []struct {
		series []string
		want   float64
	}{
		{[]string{"h9_envelopes_total", "type", "slash_commands"}, 2}, // the command and its redelivery
		{[]string{"h9_sessions_created_total"}, 1},
		{[]string{"h9_runs_started_total", "intent", "task"}, 1},
		{[]string{"h9_runs_total", "outcome", "ok"}, 1},
		{[]string{"h9_runs_in_flight"}, 0},
		{[]string{"h9_run_duration_seconds"}, 1},
		{[]string{"h9_model_requests_total"}, 3}, // the 429, the todo_write, the plan
		{[]string{"h9_model_request_duration_seconds"}, 3},
		{[]string{"h9_model_errors_total", "kind", "rate_limit"}, 1},
		{[]string{"h9_slack_rate_limited_total", "method", "chat.postMessage"}, 1},
		{[]string{"h9_slack_errors_total", "method", "chat.postMessage"}, 0},
		{[]string{"h9_ack_errors_total"}, 0},
		{[]string{"h9_lease_changes_total", "change", "acquired"}, 0}, // bbolt has no leases
	}
	for _, c := range exactly {
		if got := m.value(c.series[0], c.series[1:]...); got != c.want {
			t.Errorf("%v = %v, want %v", c.series, got, c.want)
		}
	}
	atLeast := []struct {
		series []string
		want   float64
	}{
		// the root post twice (429, then its retry), the checklist, the review
		{[]string{"h9_slack_calls_total", "method", "chat.postMessage"}, 4},
		{[]string{"h9_slack_call_duration_seconds", "method", "chat.postMessage"}, 4},
		{[]string{"h9_model_tokens_total", "type", "prompt"}, 1},
		{[]string{"h9_model_tokens_total", "type", "completion"}, 1},
		{[]string{"h9_envelopes_total", "type", "events_api"}, 1}, // the echoes of h9's posts
	}
	for _, c := range atLeast {
		if got := m.value(c.series[0], c.series[1:]...); got < c.want {
			t.Errorf("%v = %v, want at least %v", c.series, got, c.want)
		}
	}
	acks := m.value("h9_ack_latency_seconds")
	envelopes := m.value("h9_envelopes_total", "type", "slash_commands") + m.value("h9_envelopes_total", "type", "events_api") +
		m.value("h9_envelopes_total", "type", "interactive")
	if acks != envelopes {
		t.Errorf("h9_ack_latency_seconds counted %v acks, h9_envelopes_total %v envelopes: every ack is timed once", acks, envelopes)
	}
	if h := m["h9_ack_latency_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleSum() <= 0 {
		t.Errorf("ack latency sum %v, want the time the acks took", h.GetSampleSum())
	}
	if est := m.value("h9_model_tokens_estimated_total", "type", "prompt"); est != 0 {
		t.Errorf("h9_model_tokens_estimated_total = %v, want 0: the fake model reports usage", est)
	}
}

// checkNames: every family is h9's, with help, and none is labelled by
// anything unbounded.
func checkNames(t *testing.T, m scraped) {
	t.Helper()
	allowed := map[string]bool{"type": true, "method": true, "intent": true, "outcome": true, "kind": true, "change": true,
		"le": true, "version": true, "cause": true, "decision": true, "server_kind": true} // le: buckets; version: h9_go_info; cause: the handler's own errors; decision: the egress proxy's three; server_kind: remote or stdio (MCP)
	for name, f := range m {
		if !strings.HasPrefix(name, "h9_") {
			t.Errorf("metric %s lacks the h9_ prefix", name)
		}
		if f.GetHelp() == "" {
			t.Errorf("metric %s has no help", name)
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if !allowed[l.GetName()] {
					t.Errorf("metric %s has label %s", name, l.GetName())
				}
			}
		}
	}
	for _, want := range []string{"h9_ack_latency_seconds", "h9_go_goroutines", "h9_process_resident_memory_bytes"} {
		if m[want] == nil {
			t.Errorf("no metric %s", want)
		}
	}
}

// posted reports whether a message of h9's in C1 carries the block.
func posted(s *fakeslack.Server, blockID string) bool {
	for _, msg := range s.Messages("C1") {
		if strings.Contains(string(msg.Blocks), `"`+blockID+`"`) {
			return true
		}
	}
	return false
}

// /healthz answers while h9 runs; /readyz follows the Socket Mode
// connection (down while Slack refuses to reconnect it); once h9 stops,
// nothing listens on H9_HTTP_ADDR.
func TestReadyzFollowsTheSocket(t *testing.T) {
	e := startObserved(t)
	if code := e.status("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d, want 200", code)
	}
	e.waitFor("/readyz to say ready", func() bool { return e.status("/readyz") == 200 })

	// Slack drops the connection and refuses new ones (apps.connections.open
	// answers 429 until the limit is lifted).
	e.slack.RateLimit("apps.connections.open", 1_000_000, time.Second)
	connections := e.slack.ConnectionCount()
	e.slack.DropConnection()
	e.waitFor("/readyz to say not ready", func() bool { return e.status("/readyz") == 503 })
	if code, body := e.get("/readyz"); code != 503 || !strings.Contains(body, "socket mode is not connected") {
		t.Errorf("/readyz with the socket down = %d %q, want 503 naming the socket", code, body)
	}
	if code := e.status("/healthz"); code != 200 {
		t.Errorf("/healthz with the socket down = %d, want 200: the process runs", code)
	}
	if v := e.scrape().value("h9_socket_connected"); v != 0 {
		t.Errorf("h9_socket_connected = %v with the socket down, want 0", v)
	}

	e.slack.RateLimit("apps.connections.open", 0, time.Second)
	e.waitFor("h9 to reconnect", func() bool { return e.slack.ConnectionCount() > connections })
	e.waitFor("/readyz to say ready again", func() bool { return e.status("/readyz") == 200 })

	if err := e.shutdown(); err != nil {
		t.Fatalf("h9 stopped with %v", err)
	}
	if resp, err := http.Get(e.base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("after h9 stopped, %s still answers (%s)", e.base, resp.Status)
	}
}

// An H9_HTTP_ADDR that cannot be bound (here: taken) stops h9 at start
// with one line naming it and exit 2, before Slack is contacted.
func TestHTTPAddrInUseStopsH9(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	slack := fakeslack.New(fakeslack.Options{BotToken: testBotToken, AppToken: testAppToken})
	defer slack.Close()
	setEnv(t, "SLACK_API_URL", slack.APIURL(), "H9_DATA_DIR", filepath.Join(t.TempDir(), "data"), "H9_SANDBOX", "none",
		"H9_HTTP_ADDR", taken.Addr().String())
	var out, errOut bytes.Buffer
	if code := realMain(nil, &out, &errOut); code != exitConfig {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitConfig, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, `h9: H9_HTTP_ADDR="`+taken.Addr().String()+`": `) || !strings.Contains(last, "address already in use") {
		t.Errorf("last line %q: want one line naming H9_HTTP_ADDR and why", last)
	}
	if calls := slack.Calls("auth.test"); len(calls) != 0 {
		t.Errorf("h9 called auth.test %d times: a bad address must stop it before Slack", len(calls))
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
)

// Endpoint failures, as real endpoints send them. Each test fails on the
// code before this change (13c38b9) and says how.

// 429 insufficient_quota and 402 are an empty account: reported at once
// as such, with the endpoint's words. Before: retried four times, then
// reported as rate limiting.
func TestQuotaIsReportedAtOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply fakemodel.Reply
		words []string
	}{
		{"OpenAI 429 insufficient_quota", fakemodel.InsufficientQuota(), []string{"out of quota or credit", "HTTP 429, insufficient_quota", "You exceeded your current quota"}},
		{"OpenRouter 402", fakemodel.NoCredits(), []string{"out of quota or credit", "HTTP 402", "Insufficient credits"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEndpointEnv(t, envSetup{stream: true})
			e.srv.Enqueue(c.reply, fakemodel.Text("never"))
			_, evs, err := e.run("s", "hello")
			if !errors.Is(err, agent.ErrModel) {
				t.Fatalf("err = %v", err)
			}
			if n := e.srv.Calls(); n != 1 {
				t.Errorf("calls = %d, want 1: quota is not retried", n)
			}
			text := lastError(t, evs)
			for _, w := range c.words {
				if !strings.Contains(text, w) {
					t.Errorf("error text = %q, want %q", text, w)
				}
			}
			if strings.Contains(text, "rate limiting") {
				t.Errorf("quota reported as rate limiting: %q", text)
			}
		})
	}
}

// A 500 that is a set-up error (llama-server without --jinja) shows the
// endpoint's own words and the fix, and is not retried. Before: "is
// failing, try again later" after four tries.
func TestSetupErrorShowsTheEndpointsWords(t *testing.T) {
	t.Parallel()
	for _, p := range []fakemodel.ToolParser{fakemodel.LlamaCpp, fakemodel.VLLM} {
		e := newEndpointEnv(t, envSetup{stream: true, fake: []fakemodel.Option{fakemodel.WithoutToolParser(p)}})
		_, evs, err := e.run("s", "hello")
		if !errors.Is(err, agent.ErrModel) {
			t.Fatalf("err = %v", err)
		}
		text := lastError(t, evs)
		if !strings.Contains(text, "not set up for tool calls") || !strings.Contains(text, "Fix: start") ||
			!(strings.Contains(text, "tools param requires --jinja flag") || strings.Contains(text, "--enable-auto-tool-choice and --tool-call-parser to be set")) {
			t.Errorf("error text = %q", text)
		}
		if n := e.srv.Calls(); n != 1 {
			t.Errorf("calls = %d, want 1", n)
		}
	}
}

// Any other refusal shows the endpoint's own words, never the key, even
// when the endpoint repeats it.
func TestEndpointWordsWithoutTheKey(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{
		stream: true,
		fake:   []fakemodel.Option{fakemodel.WithAPIKey("sk-right")},
		model:  func(c *openai.Config, _ *fakemodel.Server) { c.APIKey = "sk-wrong-secret-1234" },
	})
	_, evs, _ := e.run("s", "hello")
	text := lastError(t, evs)
	if strings.Contains(text, "sk-wrong-secret-1234") || !strings.Contains(text, "Incorrect API key provided: [REDACTED]") ||
		!strings.Contains(text, "OPENAI_API_KEY") {
		t.Errorf("error text = %q", text)
	}
}

// A connection closed before or during the answer is retried. Before: EOF
// was not retried and was "an answer h9 could not understand".
func TestDroppedConnectionIsRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault fakemodel.Reply
	}{
		{"closed before the response", fakemodel.Dropped()},
		{"closed mid-body", fakemodel.DroppedMidBody(fakemodel.Text(strings.Repeat("partial answer ", 20)))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, stream bool) {
				e := newEndpointEnv(t, envSetup{stream: stream})
				e.srv.Enqueue(c.fault, fakemodel.Text("whole answer"))
				if res := e.mustRun("s", "hello"); res.Text != "whole answer" {
					t.Errorf("text = %q", res.Text)
				}
				if n := e.srv.Calls(); n != 2 {
					t.Errorf("calls = %d, want 2", n)
				}
			})
		})
	}
}

func TestConnectionThatKeepsDroppingIsReportedAsSuch(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, engine: func(c *agent.Config) { c.MaxRetries = 2 }})
	e.srv.Enqueue(fakemodel.Dropped(), fakemodel.Dropped())
	_, evs, _ := e.run("s", "hello")
	if text := lastError(t, evs); !strings.Contains(text, "closed before the answer was complete, 2 tries") {
		t.Errorf("error text = %q", text)
	}
}

// A stream cut midway, after a tool call began, is asked for again; the
// pieces of the cut one are dropped, so the call runs once.
func TestStreamCutMidwayDoesNotDuplicateCalls(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true})
	call := fakemodel.ToolCall("bash", `{"command":"echo ran >> log.txt"}`)
	cut := call
	cut.CutAfter = 1 // the call's head (id, name) arrives, its arguments do not
	e.srv.Enqueue(cut, call, fakemodel.Text("done"))
	e.mustRun("s", "log once")
	data, err := os.ReadFile(filepath.Join(workspaceDir(t, e, "s"), "log.txt"))
	if err != nil || string(data) != "ran\n" {
		t.Errorf("log.txt = %q, %v: want the command run once", data, err)
	}
	if calls := e.srv.Requests()[2].Messages[2].ToolCalls; len(calls) != 1 {
		t.Errorf("assistant message has %d calls, want 1", len(calls))
	}
}

// One large command output takes the prompt over the window: the endpoint
// says context_length_exceeded, h9 shortens the history (capping that
// output) and asks again. Before: the 400 was final, and every reply
// resent the same history.
func TestContextOverflowIsCompactedAndRetried(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream, fake: []fakemodel.Option{fakemodel.WithContextLimit(3000)}})
		e.srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"head -c 20000 /dev/zero | tr '\\0' a"}`), fakemodel.Text("the output was long"))
		res, evs, err := e.run("s", "print a lot")
		if err != nil {
			t.Fatalf("run: %v (%q)", err, evs[len(evs)-1].Text)
		}
		if res.Text != "the output was long" {
			t.Errorf("text = %q", res.Text)
		}
		if !hasEvent(evs, agent.EventCompacted, "did not fit the model's context window") {
			t.Errorf("no compaction event in %+v", evs)
		}
		reqs := e.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("requests = %d, want 3 (tool call, refused, retried)", len(reqs))
		}
		if out := reqs[2].Messages[3].Content; len(out) >= 20000 || !strings.Contains(out, "bytes omitted") {
			t.Errorf("retried with a tool output of %d bytes", len(out))
		}
		e.stillUsable("s")
	})
}

// When nothing can make the prompt fit, the failure says so and names
// the setting.
func TestContextOverflowThatCannotShrink(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, fake: []fakemodel.Option{fakemodel.WithContextLimit(50)}})
	_, evs, err := e.run("s", "hello")
	if !errors.Is(err, agent.ErrModel) {
		t.Fatalf("err = %v", err)
	}
	if text := lastError(t, evs); !strings.Contains(text, "does not fit the model's context window") || !strings.Contains(text, "H9_CONTEXT_WINDOW") || !strings.Contains(text, "50 tokens") {
		t.Errorf("error text = %q", text)
	}
}

// Azure OpenAI: a deployment URL keeps its api-version in the query and
// sends the key as api-key; /openai/v1 works as it is. Before: the path
// went into the query and the key went as a bearer token.
func TestAzureEndpoints(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		url  func(*fakemodel.Server) string
	}{
		{"deployment URL", func(s *fakemodel.Server) string { return s.AzureDeploymentURL("gpt-4o-prod", "2024-10-21") }},
		{"deployment URL with a slash", func(s *fakemodel.Server) string {
			return strings.Replace(s.AzureDeploymentURL("gpt-4o-prod", "2024-10-21"), "?", "/?", 1)
		}},
		{"/openai/v1", func(s *fakemodel.Server) string { return s.AzureV1URL() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, stream bool) {
				e := newEndpointEnv(t, envSetup{stream: stream, fake: []fakemodel.Option{fakemodel.WithAPIKey("azure-key")},
					model: func(m *openai.Config, s *fakemodel.Server) { m.BaseURL, m.APIKey = c.url(s), "azure-key" }})
				e.srv.Enqueue(fakemodel.Text("hello from Azure"))
				if res := e.mustRun("s", "hi"); res.Text != "hello from Azure" {
					t.Errorf("text = %q", res.Text)
				}
			})
		})
	}
}

// An Azure host gets the api-key header on /openai/v1 too; the request is
// dialled to the fake under the Azure name.
func TestAzureHostSendsAPIKey(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, model: func(m *openai.Config, s *fakemodel.Server) {
		m.BaseURL, m.APIKey = "http://my-resource.openai.azure.com/openai/v1", "azure-key"
		m.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.Addr())
		}}}
	}})
	e.srv.Enqueue(fakemodel.Text("ok"))
	e.mustRun("s", "hi")
	h := e.srv.Headers()[0]
	if h.Get("Api-Key") != "azure-key" || h.Get("Authorization") != "" {
		t.Errorf("headers: api-key %q, authorization %q", h.Get("Api-Key"), h.Get("Authorization"))
	}
}

// Streaming is the default: each request asks for SSE and for the usage
// chunk, and the tokens counted are the endpoint's. Before: no streaming.
func TestStreamsAndCountsTheUsageChunk(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true})
	e.srv.Enqueue(fakemodel.Text("hi").WithUsage(1234, 56))
	res := e.mustRun("s", "hello")
	req := e.srv.Requests()[0]
	if !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage {
		t.Errorf("request stream %v, options %+v", req.Stream, req.StreamOptions)
	}
	if u := res.Usage; u.PromptTokens != 1234 || u.CompletionTokens != 56 || u.TotalTokens != 1290 || u.Estimated {
		t.Errorf("usage = %+v, want the endpoint's", u)
	}
}

// Mistral refuses fields it does not know (stream_options, user): h9 sends
// the request again without them, and estimates the usage it then cannot
// get. Before: the user field was refused (422) and the run failed.
func TestStrictEndpointGetsTheRequestWithoutOptionalFields(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, fake: []fakemodel.Option{fakemodel.WithStrictFields()}})
	e.srv.Enqueue(fakemodel.MistralThinking("thinking", "bonjour"), fakemodel.Text("encore"))
	res := e.mustRun("s", "hello")
	if res.Text != "bonjour" || !res.Usage.Estimated || res.Usage.PromptTokens == 0 {
		t.Errorf("result = %q, usage %+v: want the answer and an estimate", res.Text, res.Usage)
	}
	e.mustRun("s", "again")
	var last map[string]json.RawMessage
	bodies := e.srv.Bodies()
	if err := json.Unmarshal(bodies[len(bodies)-1], &last); err != nil {
		t.Fatal(err)
	}
	if _, has := last["stream_options"]; has {
		t.Errorf("the refused field was sent again: %s", bodies[len(bodies)-1])
	}
	if n := e.srv.Calls(); n != 4 {
		t.Errorf("calls = %d, want 4: two refusals (one per field), then the two runs", n)
	}
}

// The idle timeout is between chunks, not over the whole answer: a stream
// that keeps coming may take longer than it, one that stops is retried.
func TestIdleTimeoutIsBetweenChunks(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, model: func(m *openai.Config, _ *fakemodel.Server) { m.IdleTimeout = time.Second }})
	slow := fakemodel.Text(strings.Repeat("word ", 100)) // 32 chunks
	slow.ChunkGap = 50 * time.Millisecond                // 1.6 s in all, 50 ms apart
	stalled := fakemodel.Text("stalled answer")
	stalled.ChunkGap = time.Minute
	e.srv.Enqueue(slow, stalled, fakemodel.Text("fresh answer"))
	if res := e.mustRun("s", "talk slowly"); res.Text != strings.Repeat("word ", 100) {
		t.Errorf("slow answer = %q", res.Text)
	}
	if res := e.mustRun("s", "then stop"); res.Text != "fresh answer" {
		t.Errorf("after a stall: %q", res.Text)
	}
}

func hasEvent(evs []agent.Event, k agent.EventKind, text string) bool {
	for _, ev := range evs {
		if ev.Kind == k && strings.Contains(ev.Text, text) {
			return true
		}
	}
	return false
}

// An answer that keeps streaming past MaxRequest is cut all the same and
// retried: a trickling endpoint cannot hold a run for ever.
func TestMaxRequestCutsATricklingAnswer(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, model: func(m *openai.Config, _ *fakemodel.Server) {
		m.IdleTimeout, m.MaxRequest = 10*time.Second, 300*time.Millisecond
	}})
	trickle := fakemodel.Text(strings.Repeat("word ", 100)) // 32 chunks
	trickle.ChunkGap = 100 * time.Millisecond               // 3.2 s in all: each gap well within the idle timeout
	e.srv.Enqueue(trickle, fakemodel.Text("fresh answer"))
	if res := e.mustRun("s", "talk slowly"); res.Text != "fresh answer" {
		t.Errorf("answer = %q, want the retry's after the trickle was cut", res.Text)
	}
	if n := e.srv.Calls(); n != 2 {
		t.Errorf("calls = %d, want 2: the cut request and its retry", n)
	}
}

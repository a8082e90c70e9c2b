package agent_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
)

// The behaviours below are answers of real endpoints that h9 before this
// change mishandled; each test fails on that code (13c38b9) and says how.

// Mistral's reasoning models send content as parts: "thinking", then
// "text". Before: the text was dropped, an empty assistant message stored
// and the next request refused, so the session was dead.
func TestContentAsPartsIsReadAsText(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		e.srv.Enqueue(fakemodel.MistralThinking("The user wants the answer; it is 42.", "The answer is 42."))
		if res := e.mustRun("s", "what is the answer?"); res.Text != "The answer is 42." {
			t.Errorf("text = %q, want the text part without the thinking", res.Text)
		}
		e.stillUsable("s")
	})
}

// An answer with neither text nor tool calls is retried once, then
// reported with its finish reason; it is never stored, and the session
// stays usable. Before: it was stored as a finished run and every later
// request of the session was refused ("expected a string, got null").
func TestEmptyAnswersAreRetriedThenReported(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply fakemodel.Reply
		words string
	}{
		{"Gemini's empty candidate", fakemodel.EmptyAnswer("stop"), "empty answer twice in a row"},
		{"reasoning model out of tokens", fakemodel.EmptyAnswer("length"), "finish_reason: length"},
		{"OpenRouter provider error", fakemodel.OpenRouterError("Upstream error from Google: overloaded"), "Upstream error from Google: overloaded"},
		{"content filter", fakemodel.EmptyAnswer("content_filter"), "content filter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bothModes(t, func(t *testing.T, stream bool) {
				e := newEndpointEnv(t, envSetup{stream: stream})
				e.srv.Enqueue(c.reply, c.reply)
				_, evs, err := e.run("s", "hello")
				if !errors.Is(err, agent.ErrModel) || !errors.Is(err, agent.ErrEmptyReply) {
					t.Fatalf("err = %v, want ErrModel and ErrEmptyReply", err)
				}
				if text := lastError(t, evs); !strings.Contains(text, c.words) || !strings.Contains(text, "Nothing was stored") {
					t.Errorf("error text = %q, want %q", text, c.words)
				}
				if n := e.srv.Calls(); n != 2 {
					t.Errorf("calls = %d, want 2 (one retry)", n)
				}
				e.stillUsable("s")
			})
		})
	}
}

func TestEmptyAnswerThenRealOneSucceeds(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		e.srv.Enqueue(fakemodel.EmptyAnswer("stop"), fakemodel.Text("here it is"))
		if res := e.mustRun("s", "hello"); res.Text != "here it is" {
			t.Errorf("text = %q", res.Text)
		}
	})
}

// A refusal with content null is shown as the model's refusal. Before:
// the run ended with no text ("No plan yet"), the refusal never shown.
func TestRefusalIsTheAnswer(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		e.srv.Enqueue(fakemodel.Refused("I can't help with that request."))
		res := e.mustRun("s", "do something bad")
		if !strings.Contains(res.Text, "refused") || !strings.Contains(res.Text, "I can't help with that request.") {
			t.Errorf("text = %q, want the refusal", res.Text)
		}
		e.stillUsable("s")
	})
}

// A final answer cut by finish_reason "length" (or a content filter) is
// said to be cut, not passed off as done. Before: a plain Done with half
// an answer.
func TestCutAnswerIsSaidToBeCut(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		filtered := fakemodel.Cut("The second part")
		filtered.FinishReason = "content_filter"
		e.srv.Enqueue(fakemodel.Cut("The report, part one: the server starts, then"), filtered)
		res, evs, err := e.run("s", "write the report")
		if !errors.Is(err, agent.ErrAnswerCut) {
			t.Fatalf("err = %v, want ErrAnswerCut", err)
		}
		if text := lastError(t, evs); !strings.Contains(text, "cut off at its output limit") || !strings.Contains(text, "finish_reason: length") {
			t.Errorf("error text = %q", text)
		}
		if _, evs, _ := e.run("s", "go on"); !strings.Contains(lastError(t, evs), "content filter") {
			t.Errorf("filtered answer not said to be cut: %q", lastError(t, evs))
		}
		if res.Text != "The report, part one: the server starts, then" {
			t.Errorf("result text = %q, want the partial answer", res.Text)
		}
		e.stillUsable("s")
	})
}

// Gemini 3 signs its tool calls (extra_content.google.thought_signature)
// and refuses the next request unless the signature comes back. Before:
// go-openai dropped the field and the second request of every plan failed.
func TestThoughtSignaturesGoBack(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		e.srv.Enqueue(
			fakemodel.ToolCalls(
				fakemodel.Call{Name: "bash", Args: `{"command":"echo one"}`, Signature: "c2lnbmF0dXJlLW9uZQ=="},
				fakemodel.Call{Name: "bash", Args: `{"command":"echo two"}`},
			),
			fakemodel.ToolCall("bash", `{"command":"echo three"}`),
			fakemodel.Text("done"),
		)
		if res := e.mustRun("s", "run the commands"); res.Text != "done" {
			t.Errorf("text = %q", res.Text)
		}
		e.stillUsable("s") // the signature is kept in the stored history too
	})
}

// DeepSeek's thinking mode wants reasoning_content back with the calls it
// came with (this passed before as well: a guard for the new message type).
func TestReasoningGoesBackWithToolCalls(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true})
	call := fakemodel.ToolCall("bash", `{"command":"echo hi"}`)
	call.Reasoning = "I should run the command first."
	e.srv.Enqueue(call, fakemodel.Text("done"))
	if res := e.mustRun("s", "say hi"); res.Text != "done" {
		t.Errorf("text = %q", res.Text)
	}
}

// Two calls with the same id in one message are made unique, so each
// result answers one call. Before: the ids were passed on and the next
// request refused.
func TestDuplicateToolCallIDsAreMadeUnique(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, stream bool) {
		e := newEndpointEnv(t, envSetup{stream: stream})
		e.srv.Enqueue(
			fakemodel.ToolCalls(
				fakemodel.Call{ID: "call_0", Name: "write_file", Args: `{"path":"a.txt","content":"first"}`},
				fakemodel.Call{ID: "call_0", Name: "write_file", Args: `{"path":"b.txt","content":"second"}`},
			),
			fakemodel.Text("done"),
		)
		e.mustRun("s", "write two files")
		var ids []string
		for _, m := range e.srv.Requests()[1].Messages {
			if m.Role == "tool" {
				ids = append(ids, m.ToolCallID)
			}
		}
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Errorf("tool result ids = %v, want two different ones", ids)
		}
		e.stillUsable("s")
	})
}

// Parallel tool calls streamed in interleaved pieces, keyed by index, are
// each assembled whole and run with their own arguments.
func TestStreamedParallelCallsAreAssembledByIndex(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true})
	long := strings.Repeat("0123456789", 20) // many pieces per call
	e.srv.Enqueue(
		fakemodel.ToolCalls(
			fakemodel.C("write_file", `{"path":"one.txt","content":"one `+long+`"}`),
			fakemodel.C("write_file", `{"path":"two.txt","content":"two `+long+`"}`),
			fakemodel.C("write_file", `{"path":"three.txt","content":"three `+long+`"}`),
		),
		fakemodel.Text("done"),
	)
	e.mustRun("s", "write three files")
	var body struct {
		Messages []struct {
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(e.srv.Bodies()[1], &body); err != nil {
		t.Fatal(err)
	}
	if n := len(body.Messages[2].ToolCalls); n != 3 {
		t.Errorf("assistant message sent back with %d calls, want 3", n)
	}
	dir := workspaceDir(t, e, "s")
	for _, f := range []string{"one", "two", "three"} {
		data, err := os.ReadFile(filepath.Join(dir, f+".txt"))
		if err != nil || string(data) != f+" "+long {
			t.Errorf("%s.txt = %q, %v", f, data, err)
		}
	}
}

// workspaceDir finds a session's workspace under the engine's manager.
func workspaceDir(t *testing.T, e *endpointEnv, session string) string {
	t.Helper()
	p, err := e.wsm.Path(session)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// LiteLLM in front of Mistral sends reasoning_content, then Mistral
// refuses it in the history (422 extra_forbidden): h9 sends the history
// again without it.
func TestReasoningRefusedByAStrictEndpointIsLeftOut(t *testing.T) {
	t.Parallel()
	e := newEndpointEnv(t, envSetup{stream: true, fake: []fakemodel.Option{fakemodel.WithStrictFields()}})
	call := fakemodel.ToolCall("bash", `{"command":"echo hi"}`)
	call.Reasoning = "I should run the command first."
	e.srv.Enqueue(call, fakemodel.Text("done"))
	if res := e.mustRun("s", "say hi"); res.Text != "done" {
		t.Errorf("text = %q", res.Text)
	}
	e.stillUsable("s")
}

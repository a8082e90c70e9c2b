package agent_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
)

// rawEndpoint answers the n-th request with bodies[n] (the last one
// repeats): a status, a content type and a raw body, written as is.
type rawAnswer struct {
	status int
	ctype  string
	body   string
	header map[string]string
}

func rawServer(t *testing.T, answers ...rawAnswer) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.String()+" "+string(b))
		a := answers[min(len(got)-1, len(answers)-1)]
		mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

const textDone = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"all done"},"finish_reason":"stop"}]}`

func TestEndpointAnswerShapes(t *testing.T) {
	t.Parallel()
	callChunks := []string{
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"x.txt\"}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	cases := []struct {
		name   string
		stream bool
		first  rawAnswer
	}{
		{"sse split call", true, rawAnswer{200, "text/event-stream", sse(append(callChunks, "[DONE]")...), nil}},
		{"sse crlf no space", true, rawAnswer{200, "text/event-stream", strings.ReplaceAll(strings.ReplaceAll(sse(append(callChunks, "[DONE]")...), "data: ", "data:"), "\n", "\r\n"), nil}},
		{"sse finish without DONE", true, rawAnswer{200, "text/event-stream", sse(callChunks...), nil}},
		{"sse ignored: plain json", true, rawAnswer{200, "application/json", `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x.txt\"}"}}]},"finish_reason":"tool_calls"}]}`, nil}},
		{"arguments as object", false, rawAnswer{200, "application/json", `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":{"path":"x.txt"}}}]},"finish_reason":"tool_calls"}]}`, nil}},
		{"no id no type", false, rawAnswer{200, "application/json", `{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"read_file","arguments":"{\"path\":\"x.txt\"}"}}]},"finish_reason":"tool_calls"}]}`, nil}},
		{"finish stop with tool calls", false, rawAnswer{200, "application/json", `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x.txt\"}"}}]},"finish_reason":"stop"}]}`, nil}},
		{"429 retry-after", false, rawAnswer{429, "application/json", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, map[string]string{"Retry-After": "1"}}},
		{"html 502", false, rawAnswer{502, "text/html", `<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := rawAnswer{200, "application/json", textDone, nil}
			if c.stream {
				done = rawAnswer{200, "text/event-stream", sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"all done"},"finish_reason":"stop"}]}`, "[DONE]"), nil}
			}
			srv, got := rawServer(t, c.first, done)
			env := newEndpointEnv(t, envSetup{stream: c.stream, model: func(mc *openai.Config, _ *fakemodel.Server) { mc.BaseURL = srv.URL + "/v1" }})
			res, evs, err := env.run("S1", "read x.txt")
			t.Logf("result=%q err=%v requests=%d", res.Text, err, len(*got))
			for _, e := range evs {
				t.Logf("  event %v %q", e.Kind, e.Text)
			}
			if err != nil || res.Text != "all done" {
				t.Errorf("run did not get through: text=%q err=%v", res.Text, err)
			}
			if len(*got) > 1 {
				t.Logf("second request: %.600s", (*got)[1])
			}
		})
	}
}

func TestEndpointErrorsNameTheCause(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a    rawAnswer
		want string
	}{
		{"html 502 persistent", rawAnswer{502, "text/html", `<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>`, nil}, "502"},
		{"ollama model missing", rawAnswer{404, "application/json", `{"error":"model \"llama9\" not found, try pulling it first"}`, nil}, "try pulling it first"},
		{"openai 401", rawAnswer{401, "application/json", `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`, nil}, "Incorrect API key"},
		{"tgi 422 overflow", rawAnswer{422, "application/json", `{"error":"Input validation error: inputs tokens + max_new_tokens must be <= 4096. Given: 5000 inputs tokens and 20 max_new_tokens","error_type":"validation"}`, nil}, "Input validation error"},
		{"cloudflare 524 text", rawAnswer{524, "text/plain", `error code: 524`, nil}, "524"},
		{"groq 413 tpm", rawAnswer{413, "application/json", `{"error":{"message":"Request too large for model llama-3.3-70b-versatile in organization org_x service tier on_demand on tokens per minute (TPM): Limit 12000, Requested 20000, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}`, nil}, "Request too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := rawServer(t, c.a)
			env := newEndpointEnv(t, envSetup{model: func(mc *openai.Config, _ *fakemodel.Server) { mc.BaseURL = srv.URL + "/v1" }})
			_, evs, err := env.run("S1", "hi")
			msg := lastError(t, evs)
			t.Logf("requests=%d err=%v\n  user sees: %s", len(*got), err, msg)
			if !strings.Contains(msg, c.want) {
				t.Errorf("message does not name the cause %q: %s", c.want, msg)
			}
		})
	}
}

// strictArgsServer is an endpoint that, like vLLM (json.loads of every
// stored call's arguments), Gemini (arguments become a JSON object) and
// Mistral, refuses a history whose tool-call arguments are not JSON. Its
// first answer is a call with the given arguments; later ones are text.
func strictArgsServer(t *testing.T, args string) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				ToolCalls []struct {
					Function struct{ Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		mu.Lock()
		seen = append(seen, string(b))
		n := len(seen)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if !json.Valid([]byte(c.Function.Arguments)) {
					w.WriteHeader(400)
					io.WriteString(w, `{"object":"error","message":"Expecting value: line 1 column 1 (char 0)","type":"BadRequestError","param":null,"code":400}`)
					return
				}
			}
		}
		if n == 1 {
			a, _ := json.Marshal(args)
			fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":%s}}]},"finish_reason":"tool_calls"}]}`, a)
			return
		}
		io.WriteString(w, textDone)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestInvalidArgumentsNeverStored(t *testing.T) {
	t.Parallel()
	for _, args := range []string{"", `{"path": "x.txt"`, `path=x.txt`} {
		t.Run(fmt.Sprintf("%q", args), func(t *testing.T) {
			srv, seen := strictArgsServer(t, args)
			env := newEndpointEnv(t, envSetup{model: func(mc *openai.Config, _ *fakemodel.Server) { mc.BaseURL = srv.URL + "/v1" }})
			res, evs, err := env.run("S1", "read x.txt")
			if err != nil {
				t.Errorf("run failed after a call with arguments %q: %v (%s); requests %d", args, err, lastError(t, evs), len(*seen))
			}
			res2, evs2, err := env.run("S1", "and again?")
			if err != nil {
				t.Errorf("session unusable: %v (%s)", err, lastError(t, evs2))
			}
			t.Logf("texts %q %q", res.Text, res2.Text)
		})
	}
}

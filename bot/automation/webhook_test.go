package automation

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingFirer is a webhook firer over an in-memory record of keys: the
// engine's own once-rule is tested with the store in engine_test.go.
type recordingFirer struct {
	a    *Automation
	mu   sync.Mutex
	seen map[string]bool
	reqs []string
}

func (f *recordingFirer) WebhookAutomation(name string) *Automation {
	if name == f.a.Name {
		return f.a
	}
	return nil
}

func (f *recordingFirer) FireWebhook(_ context.Context, a *Automation, d Delivery) (Outcome, error) {
	key, _, err := a.deliveryKey(d)
	if err != nil {
		return Outcome{}, err
	}
	req, err := a.WebhookRequest(d)
	if err != nil {
		return Outcome{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen[key] {
		return Outcome{Result: ResultDeduplicated, Link: "https://slack/t"}, nil
	}
	f.seen[key] = true
	f.reqs = append(f.reqs, req)
	return Outcome{Result: ResultStarted, Link: "https://slack/t"}, nil
}

func webhookAutomation(t *testing.T, dedupe string) *Automation {
	t.Helper()
	src := "automations:\n  - name: deploy\n    channel: C0123ABCD\n    task: 'Deploy of {{.service}} failed: {{.error.message}}'\n"
	if dedupe != "" {
		src += "    dedupe: '" + dedupe + "'\n"
	}
	src += "    on: {webhook: {secret_env: HOOK_SECRET}}\n"
	list, err := Parse(Source{File: "f.yaml"}, []byte(src), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	return list[0]
}

type hookCase struct {
	name    string
	path    string
	body    []byte
	ts      string
	sig     string // "" = signed right
	want    int
	outcome string
}

func post(t *testing.T, h http.Handler, c hookCase) *httptest.ResponseRecorder {
	t.Helper()
	path := c.path
	if path == "" {
		path = "/hooks/deploy"
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(c.body))
	r.Header.Set(HeaderTimestamp, c.ts)
	sig := c.sig
	if sig == "" {
		sig = Sign([]byte("s3cret"), c.ts, c.body)
	}
	r.Header.Set(HeaderSignature, sig)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestWebhookStatusCodes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	ts := strconv.FormatInt(now.Unix(), 10)
	f := &recordingFirer{a: webhookAutomation(t, ""), seen: map[string]bool{}}
	h := &HookHandler{Firer: f, Now: func() time.Time { return now }}
	body := []byte(`{"service":"api","error":{"message":"boom"}}`)
	huge := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), MaxWebhookBody)...), []byte(`"}`)...)
	for _, c := range []hookCase{
		{name: "signed", body: body, ts: ts, want: 202, outcome: ResultStarted},
		{name: "replayed", body: body, ts: ts, want: 200, outcome: ResultDeduplicated},
		{name: "forged", body: body, ts: ts, sig: Sign([]byte("guess"), ts, body), want: 401},
		{name: "body changed", body: []byte(`{"service":"web"}`), ts: ts, sig: Sign([]byte("s3cret"), ts, body), want: 401},
		{name: "no signature", body: body, ts: ts, sig: "sha256=", want: 401},
		{name: "old", body: body, ts: strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), want: 401},
		{name: "future", body: body, ts: strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), want: 401},
		{name: "no timestamp", body: body, ts: "", want: 401},
		{name: "bad json", body: []byte(`{"service":`), ts: ts, want: 400},
		{name: "two values", body: []byte(`{} {}`), ts: ts, want: 400},
		{name: "unknown name", path: "/hooks/nope", body: body, ts: ts, want: 404},
		{name: "no name", path: "/hooks/", body: body, ts: ts, want: 404},
		{name: "too large", body: huge, ts: ts, want: 413},
	} {
		w := post(t, h, c)
		if w.Code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, w.Code, c.want, w.Body)
			continue
		}
		var resp map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Errorf("%s: answer not JSON: %q", c.name, w.Body)
		}
		if c.outcome != "" && resp["outcome"] != c.outcome {
			t.Errorf("%s: outcome %q, want %q", c.name, resp["outcome"], c.outcome)
		}
		if strings.Contains(w.Body.String(), "s3cret") || strings.Contains(w.Body.String(), "goroutine") {
			t.Errorf("%s: the answer tells too much: %s", c.name, w.Body)
		}
	}
	if len(f.reqs) != 1 {
		t.Fatalf("%d sessions, want 1", len(f.reqs))
	}
	if !strings.HasPrefix(f.reqs[0], `Deploy of "api" failed: "boom"`) || !strings.Contains(f.reqs[0], "<<<AUTOMATION-DATA-") {
		t.Errorf("request %q", f.reqs[0])
	}
	// GET is not a delivery.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hooks/deploy", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", w.Code)
	}
}

// A dedupe template makes a new delivery with the same key a duplicate;
// a template reading a missing field gives an empty key, and the signed
// body's hash is the key then.
func TestWebhookDedupeTemplate(t *testing.T) {
	t.Parallel()
	a := webhookAutomation(t, "{{.incident.id}}")
	d := func(body, ts string) Delivery {
		p, err := decodePayload([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return Delivery{Body: []byte(body), Payload: p, Timestamp: ts}
	}
	k1, dd1, _ := a.deliveryKey(d(`{"incident":{"id":"INC-7"},"n":1}`, "1"))
	k2, dd2, _ := a.deliveryKey(d(`{"incident":{"id":"INC-7"},"n":2}`, "2"))
	if k1 != k2 || dd1 != "INC-7" || dd2 != "INC-7" {
		t.Errorf("keys %q %q dedupe %q %q", k1, k2, dd1, dd2)
	}
	// Without the dedupe field, the key is the body's hash: the same body
	// re-signed is the same key, another body another.
	k3, dd3, _ := a.deliveryKey(d(`{"n":1}`, "1"))
	k4, _, _ := a.deliveryKey(d(`{"n":1}`, "2"))
	k5, _, _ := a.deliveryKey(d(`{"n":2}`, "1"))
	if dd3 != "" || k3 != k4 || k3 == k5 || !strings.HasPrefix(k3, "webhook:") {
		t.Errorf("missing field: %q %q %q %q", k3, k4, k5, dd3)
	}
	req, err := a.WebhookRequest(d(`{"n":1}`, "1"))
	if err != nil || !strings.HasPrefix(req, `Deploy of "" failed: ""`) {
		t.Errorf("task over a payload without its fields: %q %v", req, err)
	}
}

func TestVerifyConstantAndExact(t *testing.T) {
	t.Parallel()
	a := webhookAutomation(t, "")
	now := time.Unix(1_800_000_000, 0)
	ts := "1800000000"
	body := []byte(`{}`)
	good := Sign([]byte("s3cret"), ts, body)
	if err := a.verify(ts, good, body, now); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{strings.ToUpper(good), good[:len(good)-1], strings.TrimPrefix(good, "sha256="), good + "0"} {
		if a.verify(ts, sig, body, now) == nil {
			t.Errorf("accepted %q", sig)
		}
	}
	if a.verify(ts, good, body, now.Add(ReplayWindow+time.Second)) == nil {
		t.Error("accepted past the window")
	}
}

package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
)

func TestRetryHonoursRetryAfterThenSucceeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault fakemodel.Reply
		floor time.Duration
	}{
		{"retry-after-ms", fakemodel.RateLimited(80 * time.Millisecond), 80 * time.Millisecond},
		{"Retry-After seconds", fakemodel.Reply{Status: 429, RetryAfter: "1"}, time.Second},
		{"503 without header", fakemodel.Status(503), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tt.fault, fakemodel.Text("hello"))
			start := time.Now()
			res, rec := h.mustRun("s", "hi")
			// A lower bound only: backoff is 1ms here, so waiting at least
			// the server's delay proves the header was honoured.
			if elapsed := time.Since(start); elapsed < tt.floor {
				t.Errorf("retried after %v, before Retry-After %v", elapsed, tt.floor)
			}
			if res.Text != "hello" || h.srv.Calls() != 2 {
				t.Errorf("text %q after %d calls, want hello after 2", res.Text, h.srv.Calls())
			}
			if k := rec.kinds(); k[len(k)-1] != EventDone {
				t.Errorf("events %v, want to end with done", k)
			}
		})
	}
}

func TestModelFailuresEndInErrorEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		replies   []fakemodel.Reply
		wantCalls int
		wantWords string
	}{
		{"persistent 500", []fakemodel.Reply{fakemodel.ServerError(), fakemodel.ServerError(), fakemodel.ServerError(), fakemodel.ServerError()}, 4, "HTTP 500"},
		{"persistent 429", []fakemodel.Reply{fakemodel.RateLimited(0), fakemodel.RateLimited(0), fakemodel.RateLimited(0), fakemodel.RateLimited(0)}, 4, "rate limiting"},
		{"401 is not retried", []fakemodel.Reply{fakemodel.Status(401)}, 1, "OPENAI_API_KEY"},
		{"invalid JSON body", []fakemodel.Reply{fakemodel.InvalidJSON()}, 1, "could not understand"},
		{"empty choices, retried once", []fakemodel.Reply{fakemodel.EmptyChoices(), fakemodel.EmptyChoices()}, 2, "empty answer twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tt.replies...)
			_, rec, err := h.run("s", "hi", RunOptions{})
			if !errors.Is(err, ErrModel) {
				t.Fatalf("err = %v, want ErrModel", err)
			}
			if h.srv.Calls() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", h.srv.Calls(), tt.wantCalls)
			}
			evs := rec.all()
			last := evs[len(evs)-1]
			if last.Kind != EventError || !strings.Contains(last.Text, tt.wantWords) || last.Err == nil {
				t.Errorf("last event = %v %q, want error containing %q", last.Kind, last.Text, tt.wantWords)
			}
		})
	}
}

func TestEmptyChoicesThenSuccessIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.EmptyChoices(), fakemodel.Text("ok"))
	if res, _ := h.mustRun("s", "hi"); res.Text != "ok" {
		t.Errorf("text = %q", res.Text)
	}
}

func TestRequestTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	model, err := openai.New(openai.Config{BaseURL: h.srv.URL(), APIKey: "test-key", Stream: true, IdleTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Model = model
	h.reopen()
	h.srv.Enqueue(fakemodel.Text("slow").WithLatency(10*time.Second), fakemodel.Text("fast"))
	if res, _ := h.mustRun("s", "hi"); res.Text != "fast" {
		t.Errorf("text = %q, want the retried answer", res.Text)
	}
}

package slackapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// The lease gate (lease.go) sits in the transport of the Client's one HTTP
// client, so it sees every request the Client makes: the Web API through
// slack-go and chatSend, a response_url, the bytes of an upload. Which
// session a request is for rides on its context (WithLease); a context
// without a lease is never gated. These tests run the Client against
// bot/fakeslack over a real socket and read what reached it.

// leaseRig is a Client on a fake Slack with a channel, a user and a root
// message to thread under, made on a context without a lease.
type leaseRig struct {
	slack   *fakeslack.Server
	api     *Client
	metrics *countingMetrics
	root    string // ts of a bot message in C1
	setup   int    // requests the rig made itself
}

func newLeaseRig(t *testing.T) *leaseRig {
	t.Helper()
	s := fakeslack.New(fakeslack.Options{})
	t.Cleanup(s.Close)
	s.AddChannel("C1", "general")
	s.AddUser("U1", "ada")
	s.SetEmail("U1", "ada@example.com")
	m := &countingMetrics{}
	api := New(s.Options().BotToken, s.Options().AppToken, s.APIURL(), slog.New(slog.DiscardHandler), m)
	t.Cleanup(api.CloseIdleConnections)
	root, err := api.PostMessage(context.Background(), api.log, "C1", "", render.Message{Text: "root"})
	if err != nil {
		t.Fatalf("posting the root message: %v", err)
	}
	m.reset()
	return &leaseRig{slack: s, api: api, metrics: m, root: root, setup: len(s.Calls(""))}
}

// sent is the requests of any kind the fake Slack has seen since the
// rig was set up.
func (r *leaseRig) sent() []fakeslack.Call { return r.slack.Calls("")[r.setup:] }

// sentMethods is sent's methods with their HTTP status, in order.
func (r *leaseRig) sentMethods() string {
	var out []string
	for _, c := range r.sent() {
		out = append(out, fmt.Sprintf("%s %d", c.Method, c.Status))
	}
	return strings.Join(out, ",")
}

// lease is a lease check that counts how often it is asked.
type lease struct {
	held  atomic.Bool
	asked atomic.Int64
}

func newLease(held bool) *lease {
	l := &lease{}
	l.held.Store(held)
	return l
}

func (l *lease) valid() bool {
	l.asked.Add(1)
	return l.held.Load()
}

func (l *lease) ctx() context.Context { return WithLease(context.Background(), l.valid) }

// countingMetrics counts what Call reports.
type countingMetrics struct {
	mu               sync.Mutex
	requests, failed int
}

func (m *countingMetrics) SlackRequest(string, time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
}

func (m *countingMetrics) SlackFailed(string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed++
}

func (m *countingMetrics) counts() (requests, failed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests, m.failed
}

func (m *countingMetrics) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests, m.failed = 0, 0
}

// leaseCall is one of the Client's calls, made on ctx; method is the
// request the fake Slack records first for it. do returns the call's
// error when the Client gives it back (errs), nil otherwise.
type leaseCall struct {
	name, method string
	errs         bool
	do           func(ctx context.Context, r *leaseRig) error
}

// leaseCalls are all the Client's calls: the writes a session makes into
// its thread and the reads it makes on the way.
var leaseCalls = []leaseCall{
	{"PostMessage", "chat.postMessage", true, func(ctx context.Context, r *leaseRig) error {
		_, err := r.api.PostMessage(ctx, r.api.log, "C1", r.root, render.Message{Text: "a reply"})
		return err
	}},
	{"Update", "chat.update", true, func(ctx context.Context, r *leaseRig) error {
		return r.api.Update(ctx, r.api.log, "C1", r.root, render.Message{Text: "edited"})
	}},
	{"PostEphemeral", "chat.postEphemeral", true, func(ctx context.Context, r *leaseRig) error {
		return r.api.PostEphemeral(ctx, r.api.log, "C1", "U1", r.root, render.Message{Text: "only you"})
	}},
	{"React", "reactions.add", false, func(ctx context.Context, r *leaseRig) error {
		r.api.React(ctx, r.api.log, "C1", r.root, "eyes")
		return nil
	}},
	{"Unreact", "reactions.remove", false, func(ctx context.Context, r *leaseRig) error {
		r.api.Unreact(ctx, r.api.log, "C1", r.root, "eyes")
		return nil
	}},
	{"Upload", "files.getUploadURLExternal", true, func(ctx context.Context, r *leaseRig) error {
		return r.api.Upload(ctx, r.api.log, "C1", r.root, "diff.patch", "the diff", []byte("+x\n"))
	}},
	{"UploadFrom", "files.getUploadURLExternal", true, func(ctx context.Context, r *leaseRig) error {
		return r.api.UploadFrom(ctx, r.api.log, "C1", r.root, "report.txt", "Report", strings.NewReader("ok\n"), 3)
	}},
	{"Respond", "response_url", false, func(ctx context.Context, r *leaseRig) error {
		// An unknown response_url (the fake answers 404) still shows the
		// request; no channel: no chat.postEphemeral fallback after it.
		r.api.Respond(ctx, r.api.log, r.slack.URL()+"/response/r0", "", "U1", render.Message{Text: "answer"})
		return nil
	}},
	{"FindChecklist", "conversations.replies", false, func(ctx context.Context, r *leaseRig) error {
		r.api.FindChecklist(ctx, r.api.log, "C1", r.root)
		return nil
	}},
	{"FindPost", "conversations.replies", false, func(ctx context.Context, r *leaseRig) error {
		r.api.FindPost(ctx, r.api.log, "C1", r.root, func(slack.Message) bool { return false })
		return nil
	}},
	{"Permalink", "chat.getPermalink", false, func(ctx context.Context, r *leaseRig) error {
		r.api.Permalink(ctx, r.api.log, "C1", r.root)
		return nil
	}},
	{"UserIdentity", "users.info", false, func(ctx context.Context, r *leaseRig) error {
		r.api.UserIdentity(ctx, r.api.log, "U1")
		return nil
	}},
}

// A call made under a lost lease sends nothing, whether it writes or
// reads; one that returns its error returns errLeaseLost (not a Slack
// failure: bot/actor_lease.go drops the session on it), and none counts
// as a Slack request or failure.
func TestLeaseLostSendsNothing(t *testing.T) {
	for _, c := range leaseCalls {
		t.Run(c.name, func(t *testing.T) {
			r, l := newLeaseRig(t), newLease(false)
			err := c.do(l.ctx(), r)
			if sent := r.sent(); len(sent) != 0 {
				t.Errorf("%d requests reached Slack under a lost lease, first %s", len(sent), sent[0].Method)
			}
			if c.errs && !errors.Is(err, errLeaseLost) {
				t.Errorf("err = %v, want errLeaseLost: the actor drops the session on it", err)
			}
			if l.asked.Load() == 0 {
				t.Error("the lease was never asked")
			}
			if req, failed := r.metrics.counts(); req != 0 || failed != 0 {
				t.Errorf("metrics counted %d requests, %d failures for a call never sent", req, failed)
			}
		})
	}
}

// Under a held lease every call reaches Slack, and the lease was asked
// for it.
func TestLeaseHeldLetsCallsThrough(t *testing.T) {
	for _, c := range leaseCalls {
		t.Run(c.name, func(t *testing.T) {
			r, l := newLeaseRig(t), newLease(true)
			_ = c.do(l.ctx(), r)
			if got := r.slack.Calls(c.method); len(got) == 0 {
				t.Errorf("no %s reached Slack under a held lease (%d requests)", c.method, len(r.sent()))
			}
			if l.asked.Load() == 0 {
				t.Error("the lease was never asked")
			}
		})
	}
}

// The gate asks the lease of the call's own context, and only that one:
// a session's lost lease refuses its calls alone, another session's held
// lease lets its calls through, and a call on a context without a lease
// (auth.test at start, a slash command's answer) is never gated.
func TestLeaseIsTheCallContexts(t *testing.T) {
	r := newLeaseRig(t)
	held, lost := newLease(true), newLease(false)
	if _, err := r.api.PostMessage(held.ctx(), r.api.log, "C1", r.root, render.Message{Text: "held"}); err != nil {
		t.Fatalf("posting under a held lease: %v", err)
	}
	if _, err := r.api.PostMessage(lost.ctx(), r.api.log, "C1", r.root, render.Message{Text: "lost"}); !errors.Is(err, errLeaseLost) {
		t.Fatalf("posting under a lost lease: err = %v, want errLeaseLost", err)
	}
	derived, cancel := context.WithTimeout(lost.ctx(), time.Minute)
	defer cancel()
	if err := r.api.Update(derived, r.api.log, "C1", r.root, render.Message{Text: "lost"}); !errors.Is(err, errLeaseLost) {
		t.Fatalf("editing on a context derived from a lost lease's: err = %v, want errLeaseLost", err)
	}
	if _, err := r.api.Slack().AuthTestContext(context.Background()); err != nil {
		t.Fatalf("auth.test without a lease: %v", err)
	}
	if _, err := r.api.PostMessage(context.Background(), r.api.log, "C1", r.root, render.Message{Text: "plain"}); err != nil {
		t.Fatalf("posting without a lease: %v", err)
	}
	if h, l := held.asked.Load(), lost.asked.Load(); h != 1 || l != 2 {
		t.Errorf("the held lease was asked %d times, the lost one %d; want 1 and 2: one per request of their own context", h, l)
	}
	var texts []string
	for _, m := range r.slack.Thread("C1", r.root)[1:] {
		texts = append(texts, m.Text)
	}
	if got := strings.Join(texts, ","); got != "held,plain" {
		t.Errorf("the thread holds %q, want held,plain", got)
	}
	if got, _ := r.slack.Message("C1", r.root); got.Text != "root" {
		t.Errorf("the root reads %q: the edit under a lost lease reached Slack", got.Text)
	}
}

// A lease that comes and goes is asked anew by each call: a checklist's
// edits stop the moment it is lost and would go on were it held again.
func TestLeaseAskedOnEveryCall(t *testing.T) {
	r, l := newLeaseRig(t), newLease(true)
	ctx := l.ctx()
	for i, held := range []bool{true, false, false, true, false} {
		l.held.Store(held)
		before := len(r.slack.Calls("chat.update"))
		err := r.api.Update(ctx, r.api.log, "C1", r.root, render.Message{Text: "edit"})
		sent := len(r.slack.Calls("chat.update")) - before
		switch {
		case held && (err != nil || sent != 1):
			t.Errorf("edit %d, lease held: err %v, %d sent; want it sent", i, err, sent)
		case !held && (!errors.Is(err, errLeaseLost) || sent != 0):
			t.Errorf("edit %d, lease lost: err %v, %d sent; want errLeaseLost, none sent", i, err, sent)
		}
	}
	if n := l.asked.Load(); n != 5 {
		t.Errorf("the lease was asked %d times for 5 edits, want 5", n)
	}
}

// heldFor is a lease lost after its first n asks: what a replica sees
// when it pauses past its lease in the middle of a call.
func heldFor(n int64) context.Context {
	var asked atomic.Int64
	return WithLease(context.Background(), func() bool { return asked.Add(1) <= n })
}

// The lease is asked for each request, not once per call: a retry after
// a 429 whose wait outlasted the lease is not sent.
func TestLeaseLostDuringRateLimitWait(t *testing.T) {
	r := newLeaseRig(t)
	r.slack.RateLimit("chat.postMessage", 1, time.Second)
	_, err := r.api.PostMessage(heldFor(1), r.api.log, "C1", r.root, render.Message{Text: "late"})
	if !errors.Is(err, errLeaseLost) {
		t.Errorf("err = %v, want errLeaseLost", err)
	}
	if got := r.sentMethods(); got != "chat.postMessage 429" {
		t.Errorf("requests sent: %s; want one chat.postMessage, answered 429", got)
	}
	if got := len(r.slack.Thread("C1", r.root)); got != 1 {
		t.Errorf("the thread has %d messages, want only its root", got)
	}
}

// An upload is three requests; a lease lost after the first stops the
// bytes and the share, so nothing appears in the thread.
func TestLeaseLostMidUpload(t *testing.T) {
	r := newLeaseRig(t)
	err := r.api.Upload(heldFor(1), r.api.log, "C1", r.root, "diff.patch", "the diff", []byte("+x\n"))
	if !errors.Is(err, errLeaseLost) {
		t.Errorf("err = %v, want errLeaseLost", err)
	}
	if got := r.sentMethods(); got != "files.getUploadURLExternal 200" {
		t.Errorf("requests sent: %s; want only files.getUploadURLExternal", got)
	}
	if files := r.slack.Files("C1"); len(files) != 0 {
		t.Errorf("%d files shared into the channel under a lost lease", len(files))
	}
}

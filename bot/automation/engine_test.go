package automation

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store/boltstore"
)

// slackSide records what the engine asks of the bot. The store is the
// real bbolt backend.
type slackSide struct {
	mu      sync.Mutex
	starts  []StartRequest
	posts   []string // "channel/thread: text [resume]"
	open    map[string]bool
	failure error
	n       int
}

func (s *slackSide) StartSession(_ context.Context, r StartRequest) (Started, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failure != nil {
		return Started{}, s.failure
	}
	s.n++
	s.starts = append(s.starts, r)
	thread := r.Thread
	if thread == "" {
		thread = fmt.Sprintf("1700000000.%06d", s.n)
	}
	s.open[r.Channel+"/"+thread] = true
	return Started{Channel: r.Channel, Thread: thread, Link: "https://slack/" + thread}, nil
}

func (s *slackSide) Post(_ context.Context, channel, thread, text, resume string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := channel + "/" + thread + ": " + text
	if resume != "" {
		p += " [Resume " + resume + "]"
	}
	s.posts = append(s.posts, p)
	return nil
}

func (s *slackSide) SessionOpen(_ context.Context, channel, thread string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[channel+"/"+thread], nil
}

func (s *slackSide) Permalink(_ context.Context, channel, ts string) string {
	return "https://slack/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

func (s *slackSide) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.open)
}

func (s *slackSide) counts() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.starts), append([]string(nil), s.posts...)
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func boltStore(t testing.TB) *boltstore.Store {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := boltstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) count(name string, k Kind, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[name+"/"+string(k)+"/"+outcome]++
}

func (c *counter) get(key string) int { c.mu.Lock(); defer c.mu.Unlock(); return c.m[key] }

func engineFor(t *testing.T, st Store, bot Bot, clk *clock, replica string, src string) (*Engine, *counter) {
	t.Helper()
	env := testEnv()
	env.Now = clk.Now()
	list, err := Parse(Source{File: "f.yaml"}, []byte(src), env)
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{m: map[string]int{}}
	e := NewEngine(Options{Store: st, Bot: bot, Replica: replica, Now: clk.Now, Count: c.count})
	if err := e.Set("f.yaml", list); err != nil {
		t.Fatal(err)
	}
	return e, c
}

const hourly = "automations:\n  - name: tidy\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: Tidy up\n    on: {schedule: \"0 * * * *\"}\n"

// Two replicas on one store fire an occurrence once.
func TestScheduleFiresOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e1, c1 := engineFor(t, st, bot, clk, "r1", hourly)
	e2, c2 := engineFor(t, st, bot, clk, "r2", hourly)
	ctx := t.Context()
	e1.catchUp(ctx)
	e2.catchUp(ctx)
	if n, _ := bot.counts(); n != 0 {
		t.Fatalf("first load started %d sessions (no backfill)", n)
	}
	clk.Set(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	var wg sync.WaitGroup
	for _, e := range []*Engine{e1, e2} {
		wg.Go(func() { e.fireDue(ctx) })
	}
	wg.Wait()
	n, _ := bot.counts()
	if n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	if got := c1.get("tidy/schedule/started") + c2.get("tidy/schedule/started"); got != 1 {
		t.Errorf("started counted %d times", got)
	}
	r := bot.starts[0]
	if r.Key != "schedule:2026-01-05T10:00:00Z" || r.Owner != "U0123ABCD" || !strings.Contains(r.Source, "schedule") || r.Request != "Tidy up" {
		t.Errorf("start %+v", r)
	}
	// A restart at the same time fires nothing again.
	e3, _ := engineFor(t, st, bot, clk, "r3", hourly)
	e3.catchUp(ctx)
	e3.fireDue(ctx)
	if n, _ := bot.counts(); n != 1 {
		t.Errorf("a restart started another: %d", n)
	}
}

// After an outage the latest missed occurrence fires once and the
// channel hears how many were skipped.
func TestScheduleCatchUpOnce(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, _ := engineFor(t, st, bot, clk, "r1", hourly)
	e.catchUp(t.Context())
	clk.Set(time.Date(2026, 1, 5, 14, 10, 0, 0, time.UTC)) // 10..14 missed
	for _, r := range []string{"r2", "r3"} {
		e, _ := engineFor(t, st, bot, clk, r, hourly)
		e.catchUp(t.Context())
	}
	n, posts := bot.counts()
	if n != 1 || bot.starts[0].Key != "schedule:2026-01-05T14:00:00Z" {
		t.Fatalf("%d sessions %+v", n, bot.starts)
	}
	if len(posts) != 1 || !strings.Contains(posts[0], "missed 4 occurrences") {
		t.Errorf("posts %q", posts)
	}
}

// A start that fails is said once per cause; the third in a row pauses
// the automation with Resume; a paused one skips; run fires it anyway;
// resume clears the count.
func TestFailuresSaidOnceThenPause(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}, failure: errors.New("channel_not_found: h9 is not in the channel")}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, c := engineFor(t, st, bot, clk, "r1", hourly)
	ctx := t.Context()
	e.catchUp(ctx)
	for h := 10; h <= 13; h++ {
		clk.Set(time.Date(2026, 1, 5, h, 0, 0, 0, time.UTC))
		e.fireDue(ctx)
	}
	_, posts := bot.counts()
	want := []string{
		"C0123ABCD/: h9 could not start *tidy*: channel_not_found: h9 is not in the channel",
		"C0123ABCD/: *tidy* is paused: its last 3 starts failed. Resume it once the cause is fixed. [Resume tidy]",
	}
	if strings.Join(posts, "\n") != strings.Join(want, "\n") {
		t.Errorf("posts:\n%s\nwant:\n%s", strings.Join(posts, "\n"), strings.Join(want, "\n"))
	}
	if c.get("tidy/schedule/failed") != 3 || c.get("tidy/schedule/skipped") != 1 {
		t.Errorf("counts %v", c.m)
	}
	bot.mu.Lock()
	bot.failure = nil
	bot.mu.Unlock()
	if out, err := e.RunNow(ctx, "tidy", "U0ADMIN01"); err != nil || out.Result != ResultStarted {
		t.Errorf("run while paused: %+v %v", out, err)
	}
	if err := e.SetPaused(ctx, "tidy", "U0123ABCD", false); err != nil {
		t.Fatal(err)
	}
	bot.closeAll()
	clk.Set(time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC))
	e.fireDue(ctx)
	if n, _ := bot.counts(); n != 2 {
		t.Errorf("after resume: %d sessions, want 2", n)
	}
}

func TestOverlapSkipAndQueue(t *testing.T) {
	t.Parallel()
	for _, overlap := range []string{"skip", "queue"} {
		st := boltStore(t)
		bot := &slackSide{open: map[string]bool{}}
		clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
		e, _ := engineFor(t, st, bot, clk, "r1", hourly+"    overlap: "+overlap+"\n")
		ctx := t.Context()
		e.catchUp(ctx)
		clk.Set(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
		e.fireDue(ctx)
		clk.Set(time.Date(2026, 1, 5, 11, 0, 0, 0, time.UTC))
		e.fireDue(ctx) // the 10:00 session is still open
		if n, _ := bot.counts(); n != 1 {
			t.Fatalf("%s: %d sessions while one is open", overlap, n)
		}
		bot.closeAll()
		e.Sweep(ctx)
		n, _ := bot.counts()
		if want := map[string]int{"skip": 1, "queue": 2}[overlap]; n != want {
			t.Errorf("%s: %d sessions after the first closed, want %d", overlap, n, want)
		}
		if overlap == "queue" && bot.starts[1].Key != "schedule:2026-01-05T11:00:00Z" {
			t.Errorf("queued start %+v", bot.starts[1])
		}
	}
}

func TestDailyBudget(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, _ := engineFor(t, st, bot, clk, "r1", hourly+"    daily_budget: 1000\n    budget: 500\n")
	ctx := t.Context()
	e.catchUp(ctx)
	clk.Set(time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC))
	e.fireDue(ctx)
	if bot.starts[0].Budget != 500 {
		t.Errorf("budget %d", bot.starts[0].Budget)
	}
	if err := e.Spent(ctx, "tidy", 1200); err != nil {
		t.Fatal(err)
	}
	bot.closeAll()
	clk.Set(time.Date(2026, 1, 5, 11, 0, 0, 0, time.UTC))
	e.fireDue(ctx)
	n, posts := bot.counts()
	if n != 1 || len(posts) != 1 || !strings.Contains(posts[0], "daily budget of 1000 tokens is spent") {
		t.Errorf("%d sessions, posts %q", n, posts)
	}
	clk.Set(time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)) // a new day
	e.fireDue(ctx)
	if n, _ := bot.counts(); n != 2 {
		t.Errorf("a new day: %d sessions, want 2", n)
	}
}

// A webhook's dedupe key: a repeat while its session is open is an
// "Again" in that thread; once it closed, the key fires anew.
func TestWebhookDedupeAgain(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	src := "automations:\n  - name: deploy\n    channel: C0123ABCD\n    task: 'Deploy of {{.service}} failed'\n    dedupe: '{{.service}}'\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"
	e, c := engineFor(t, st, bot, clk, "r1", src)
	a := e.WebhookAutomation("deploy")
	ctx := t.Context()
	deliver := func(body, ts string) Outcome {
		p, _ := decodePayload([]byte(body))
		out, err := e.FireWebhook(ctx, a, Delivery{Body: []byte(body), Payload: p, Timestamp: ts})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := deliver(`{"service":"api"}`, "1"); out.Result != ResultStarted {
		t.Fatalf("first: %+v", out)
	}
	if out := deliver(`{"service":"api","try":2}`, "2"); out.Result != ResultDeduplicated {
		t.Fatalf("repeat: %+v", out)
	}
	n, posts := bot.counts()
	if n != 1 || len(posts) != 1 || posts[0] != "C0123ABCD/1700000000.000001: Again: the webhook was delivered again for api" {
		t.Errorf("%d sessions, posts %q", n, posts)
	}
	if !strings.HasPrefix(bot.starts[0].Request, `Deploy of "api" failed`) || !strings.Contains(bot.starts[0].Request, `"service": "api"`) {
		t.Errorf("request %q", bot.starts[0].Request)
	}
	bot.closeAll()
	if out := deliver(`{"service":"api","try":3}`, "3"); out.Result != ResultStarted {
		t.Errorf("after its session closed: %+v", out)
	}
	if c.get("deploy/webhook/started") != 2 || c.get("deploy/webhook/deduplicated") != 1 {
		t.Errorf("counts %v", c.m)
	}
}

// A matched message starts its session in the message's thread, once
// however often the event comes.
func TestMessageStartsInItsThread(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, _ := engineFor(t, st, bot, clk, "r1", goodFile)
	m := Message{Channel: "C0ALERTS1", TS: "1700000000.000100", BotID: "B0BOT1234", Texts: []string{"FIRING: alert disk on db-1"}}
	e.OnMessage(t.Context(), m)
	e.OnMessage(t.Context(), m) // a redelivery
	m2 := m
	m2.TS = "1700000001.000100" // the same alert again: the dedupe key's open thread
	e.OnMessage(t.Context(), m2)
	n, posts := bot.counts()
	if n != 1 || bot.starts[0].Thread != m.TS || bot.starts[0].Channel != "C0ALERTS1" {
		t.Fatalf("%d sessions %+v", n, bot.starts)
	}
	if want := "message https://slack/archives/C0ALERTS1/p1700000000000100"; bot.starts[0].Source != want {
		t.Errorf("source %q; want %q (the message's permalink)", bot.starts[0].Source, want)
	}
	if len(posts) != 1 || !strings.HasPrefix(posts[0], "C0ALERTS1/1700000000.000100: Again: the alert came again") {
		t.Errorf("posts %q", posts)
	}
}

// Of two replicas on one store, one takes each period's turn (the first
// to ask); the turn of the next period is free again, and a replica that
// asks twice in one period does not get it twice.
func TestTurnOncePerPeriod(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 10, 0, time.UTC)}
	e1, _ := engineFor(t, st, bot, clk, "r1", hourly)
	e2, _ := engineFor(t, st, bot, clk, "r2", hourly)
	ctx := t.Context()
	if !e1.claimTurn(ctx, "poll:acme/api", time.Minute) || e2.claimTurn(ctx, "poll:acme/api", time.Minute) || e1.claimTurn(ctx, "poll:acme/api", time.Minute) {
		t.Fatal("the first period: want r1's turn only, once")
	}
	if !e2.claimTurn(ctx, "poll:acme/other", time.Minute) {
		t.Error("another repository's turn is its own")
	}
	clk.Set(clk.Now().Add(50 * time.Second)) // the next period
	if !e2.claimTurn(ctx, "poll:acme/api", time.Minute) || e1.claimTurn(ctx, "poll:acme/api", time.Minute) {
		t.Error("the next period: want r2's turn only")
	}
}

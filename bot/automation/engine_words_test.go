package automation

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/forgetest"
	"github.com/h9-app/h9/workspace/testenv"
)

const plainHook = "automations:\n  - name: deploy\n    channel: C0123ABCD\n    task: 'Deploy of {{.service}} failed'\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"

// postSigned posts body to the handler signed at ts, as the contract's
// client signs.
func postSigned(t *testing.T, h http.Handler, body string, ts time.Time) *httptest.ResponseRecorder {
	t.Helper()
	stamp := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(stamp + "." + body))
	r := httptest.NewRequest(http.MethodPost, "/hooks/deploy", strings.NewReader(body))
	r.Header.Set(HeaderTimestamp, stamp)
	r.Header.Set("X-H9-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The same body re-signed with a new timestamp is a duplicate (the key is
// the body's hash), answered 200 with the session's permalink, counted
// once as deduplicated; the root message shows the task rendered.
func TestWebhookSameBodyResignedIsDuplicate(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	now := time.Now()
	clk := &clock{t: now}
	e, c := engineFor(t, st, bot, clk, "r1", plainHook)
	h := &HookHandler{Firer: e, Now: clk.Now}
	body := `{"service":"api"}`
	if w := postSigned(t, h, body, now); w.Code != http.StatusAccepted {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	e.after.Wait()
	bot.closeAll() // even once its session closed, the same body is the same event
	w := postSigned(t, h, body, now.Add(time.Minute))
	if w.Code != http.StatusOK {
		t.Fatalf("re-signed: %d %s", w.Code, w.Body)
	}
	if want := "https://slack/archives/C0123ABCD/p1700000000000001"; !strings.Contains(w.Body.String(), want) {
		t.Errorf("the duplicate's answer %s, want the permalink %s", w.Body, want)
	}
	if n, _ := bot.counts(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
	if got := bot.starts[0].Task; got != `Deploy of "api" failed` {
		t.Errorf("root task %q, want the task rendered", got)
	}
	if c.get("deploy/webhook/deduplicated") != 1 || c.get("deploy/webhook/started") != 1 {
		t.Errorf("counts %v", c.m)
	}
}

// Every duplicate counts once as deduplicated: a replay whose occurrence
// is still pending, and a message Slack delivers again.
func TestEveryDuplicateCounted(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}, failure: context.DeadlineExceeded}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, c := engineFor(t, st, bot, clk, "r1", goodFile)
	// A message automation with a dedupe key: the redelivered event.
	m := Message{Channel: "C0ALERTS1", TS: "1700000000.000100", BotID: "B0BOT1234", Texts: []string{"FIRING: alert disk on db-1"}}
	bot.failure = nil
	e.OnMessage(t.Context(), m)
	e.OnMessage(t.Context(), m)
	if got := c.get("alerts/message/deduplicated"); got != 1 {
		t.Errorf("a redelivered message counted %d times, want 1 (%v)", got, c.m)
	}
	// A webhook occurrence still pending (recorded, not yet started).
	a := e.WebhookAutomation("deploy")
	body := `{"id":"d-1","service":{"name":"api"}}`
	p, _ := decodePayload([]byte(body))
	d := Delivery{Body: []byte(body), Payload: p, Timestamp: "1"}
	key, dedupe, err := a.deliveryKey(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.RecordOccurrence(t.Context(), occurrenceRecord(a, key, dedupe, clk.Now())); err != nil {
		t.Fatal(err)
	}
	out, err := e.FireWebhook(t.Context(), a, d)
	if err != nil || out.Result != ResultDeduplicated {
		t.Fatalf("a replay of a pending occurrence: %+v %v", out, err)
	}
	if got := c.get("deploy/webhook/deduplicated"); got != 1 {
		t.Errorf("a pending replay counted %d times, want 1 (%v)", got, c.m)
	}
}

// occurrenceRecord is an occurrence as a stopped process leaves it:
// recorded, never started.
func occurrenceRecord(a *Automation, key, dedupe string, at time.Time) store.Occurrence {
	return store.Occurrence{Automation: a.Name, Key: key, Dedupe: dedupe, State: store.OccurrenceRecorded,
		Recorded: at, Owner: "a-stopped-process", Claimed: at}
}

// An occurrence recorded but never posted, as kill -9 leaves it: alone on
// its bbolt file, the next life of the process starts it as soon as it
// runs (a retry: the root message may have been posted), not a sweep
// and a claim age later; with others on the store, its start-up sweep
// still takes what is past the claim age.
func TestRestartStartsWhatItsPreviousLifeLeft(t *testing.T) {
	t.Parallel()
	for _, sole := range []bool{true, false} {
		st := boltStore(t)
		bot := &slackSide{open: map[string]bool{}}
		now := time.Now()
		env := testEnv()
		env.Now = now
		list, err := Parse(Source{File: "f.yaml"}, []byte(hourly), env)
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(Options{Store: st, Bot: bot, Replica: "host/2", Alone: sole})
		if err := e.Set("f.yaml", list); err != nil {
			t.Fatal(err)
		}
		a := e.Get("tidy")
		left := now.Add(-2 * time.Second) // killed just after recording it
		if !sole {
			left = now.Add(-claimAge - time.Minute) // another replica's, long past
		}
		key := ScheduleKey(now.Truncate(time.Hour))
		rec := occurrenceRecord(a, key, "", left)
		rec.Data, _ = json.Marshal(e.newRequest(a, key))
		if _, _, err := st.RecordOccurrence(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		deadline := time.Now().Add(5 * time.Second)
		for n, _ := bot.counts(); n == 0 && time.Now().Before(deadline); n, _ = bot.counts() {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		n, _ := bot.counts()
		if n != 1 {
			t.Fatalf("sole=%v: %d sessions within seconds of the start, want 1", sole, n)
		}
		if !bot.starts[0].Retry || bot.starts[0].Key != key {
			t.Errorf("sole=%v: start %+v, want a retry of %s", sole, bot.starts[0], key)
		}
	}
}

// badTokenForges reads acme/api on the fake GitHub with a token it
// refuses (401).
type badTokenForges struct{ gh *fakegithub.Server }

func (f badTokenForges) Forge(string) (forge.Client, error) {
	return forge.New(forge.Project{Kind: forge.GitHub, Path: "acme/api", API: f.gh.URL(), TokenEnv: "H9_GITHUB_TOKEN"}, "ghp_revoked", nil)
}

// A forge that refuses the poll (401) is a failed start, said once in
// the channel, and the third in a row pauses the automation; a rate
// limit is waited out quietly.
func TestForgeRefusingIsLoud(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	bare, _ := forgetest.Bare(t)
	gh := fakegithub.New("ghp_good")
	t.Cleanup(gh.Close)
	gh.AddRepo("acme/api", bare, true)
	src := "automations:\n  - name: triage\n    channel: C0123ABCD\n    owner: U0123ABCD\n    repo: acme/api\n    task: Fix the issue\n    on: {issue: {label: h9}}\n"
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Now().Add(-time.Minute)}
	e, c := engineFor(t, st, bot, clk, "r1", src)
	ctx := t.Context()
	poll := func() {
		e.pollForges(ctx)
		clk.Set(clk.Now().Add(DefaultPoll))
	}
	e.SetForges(githubForges{gh})
	poll() // first load
	gh.RateLimit(time.Now().Add(time.Hour))
	poll()
	if _, posts := bot.counts(); len(posts) != 0 {
		t.Fatalf("a rate limit was said: %q", posts)
	}
	e.SetForges(badTokenForges{gh})
	for range 3 {
		poll()
	}
	_, posts := bot.counts()
	said, paused := 0, 0
	for _, p := range posts {
		if strings.HasPrefix(p, "C0123ABCD/: h9 could not start *triage*: the forge refused: ") && strings.Contains(p, "401") {
			said++
		}
		if strings.Contains(p, "*triage* is paused") && strings.HasSuffix(p, "[Resume triage]") {
			paused++
		}
	}
	if said != 1 || paused != 1 {
		t.Errorf("said %d, paused %d, want 1 and 1: %q", said, paused, posts)
	}
	if got := c.get("triage/issue/failed"); got != 3 {
		t.Errorf("%d failed starts counted, want 3", got)
	}
}

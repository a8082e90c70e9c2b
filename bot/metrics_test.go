package bot

import (
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// countingMetrics records what the bot reports, as cmd/h9's would count it.
type countingMetrics struct {
	mu         sync.Mutex
	acks       map[string]int // by envelope type
	ackFailed  int
	untimed    int // acks or requests reported with no time
	duplicates map[string]int
	requests   map[string]int // by method
	limited    map[string]int
	failed     map[string]int
	created    int
	active     int
}

func newCountingMetrics() *countingMetrics {
	return &countingMetrics{acks: map[string]int{}, duplicates: map[string]int{},
		requests: map[string]int{}, limited: map[string]int{}, failed: map[string]int{}}
}

func (m *countingMetrics) EnvelopeAcked(kind string, wait time.Duration, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acks[kind]++
	if failed {
		m.ackFailed++
	}
	if wait <= 0 {
		m.untimed++
	}
}

func (m *countingMetrics) EnvelopeDuplicate(kind string) { m.add(m.duplicates, kind) }

func (m *countingMetrics) SlackRequest(method string, d time.Duration, rateLimited bool) {
	m.add(m.requests, method)
	if rateLimited {
		m.add(m.limited, method)
	}
	if d <= 0 {
		m.add(map[string]int{}, "")
		m.mu.Lock()
		m.untimed++
		m.mu.Unlock()
	}
}

func (m *countingMetrics) SlackFailed(method string) { m.add(m.failed, method) }

func (m *countingMetrics) SessionCreated() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created++
}

func (m *countingMetrics) SessionsActive(delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active += delta
}

func (m *countingMetrics) add(into map[string]int, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	into[key]++
}

// get reads one count under the lock.
func (m *countingMetrics) get(f func(*countingMetrics) int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return f(m)
}

func withMetrics(m Metrics) func(*Config) { return func(c *Config) { c.Metrics = m } }

// A session's life, counted: its command's envelope acked and timed (and
// its redelivery a duplicate), one session created, active while it runs
// and not once it settled, every Web API request by its method.
func TestMetricsCountASession(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	m := newCountingMetrics()
	e := newEnv(t, withMetrics(m))
	e.model.Enqueue(planReplies("the plan", "a:pending")...)
	e.slack.RateLimit("chat.postMessage", 1, time.Second)
	ack := e.slash(testUser, testChannel, "plan count me")
	e.waitFor("the root message", func() bool { return len(e.rootMessages()) == 1 })
	e.waitMessage(e.rootMessages()[0].TS, render.ActionApproveAuto, 1)
	if _, err := e.slack.Redeliver(e.ctx, ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the redelivery counted", func() bool { return m.get(func(m *countingMetrics) int { return m.duplicates["slash_commands"] }) > 0 })
	e.waitFor("the session to settle", func() bool { return m.get(func(m *countingMetrics) int { return m.active }) == 0 })
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acks["slash_commands"] != 2 || m.ackFailed != 0 || m.untimed != 0 {
		t.Errorf("acks %v (%d failed, %d untimed), want the command twice, all timed", m.acks, m.ackFailed, m.untimed)
	}
	if m.duplicates["slash_commands"] != 1 || m.created != 1 {
		t.Errorf("%v duplicates, %d sessions created: want the redelivery once, one session", m.duplicates, m.created)
	}
	if m.limited["chat.postMessage"] != 1 || m.requests["chat.postMessage"] < 4 {
		t.Errorf("chat.postMessage: %d requests, %d limited; want the root post twice, the checklist and the review, one limited",
			m.requests["chat.postMessage"], m.limited["chat.postMessage"])
	}
	if len(m.failed) != 0 {
		t.Errorf("failed calls %v, want none", m.failed)
	}
	for method, n := range m.requests {
		if got := len(e.slack.Calls(method)); got != n {
			t.Errorf("%s: %d requests counted, the fake answered %d", method, n, got)
		}
	}
}

// A call Slack refuses for good is one failure of its method; the
// response_url that answers the user instead is a method of its own.
func TestMetricsCountFailedCalls(t *testing.T) {
	m := newCountingMetrics()
	e := newEnv(t, withMetrics(m))
	e.slack.FailNext("chat.postMessage", "not_in_channel")
	e.slack.FailNext("chat.postEphemeral", "not_in_channel")
	e.slash(testUser, testChannel, "plan somewhere private")
	e.waitEphemeral(testChannel, testUser, "/invite @h9")
	e.waitFor("the response_url counted", func() bool { return m.get(func(m *countingMetrics) int { return m.requests["response_url"] }) == 1 })
	m.mu.Lock()
	defer m.mu.Unlock()
	if want := map[string]int{"chat.postMessage": 1}; !maps.Equal(m.failed, want) {
		t.Errorf("failed %v, want %v", m.failed, want)
	}
	if m.requests["chat.postMessage"] != 1 {
		t.Errorf("%d chat.postMessage requests, want 1: not_in_channel is not retried", m.requests["chat.postMessage"])
	}
}

// Connected follows the socket: true once Slack said hello, false while
// Slack refuses to reconnect, true again after, false once Run returned.
func TestConnectedFollowsTheSocket(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.waitFor("connected", e.bot.Connected)
	e.slack.RateLimit("apps.connections.open", 1_000_000, time.Second)
	conns := e.slack.ConnectionCount()
	e.slack.DropConnection()
	e.waitFor("disconnected", func() bool { return !e.bot.Connected() })
	e.slack.RateLimit("apps.connections.open", 0, time.Second)
	e.waitFor("a new socket", func() bool { return e.slack.ConnectionCount() > conns })
	e.waitFor("connected again", e.bot.Connected)
	b := e.bot
	e.stop()
	if b.Connected() {
		t.Error("Connected after Run returned")
	}
}

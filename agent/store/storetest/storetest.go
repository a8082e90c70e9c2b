// Package storetest is the conformance suite every storage backend of h9
// must pass: what the agent and the bot rely on, checked through the
// interfaces alone. It assumes nothing about how a backend stores data
// (stored JSON is compared by meaning, times at microsecond precision),
// so a backend runs it unchanged:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) (storetest.Backend, storetest.Reopen) { … })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// Backend is every method the agent (agent.Store) and the bot (bot.Store)
// call on storage: a backend implements all of them.
type Backend interface {
	// The agent's sessions.
	LoadSession(ctx context.Context, id string) (store.AgentSession, error)
	AppendStep(ctx context.Context, id string, st store.Step) error
	ReplaceHistory(ctx context.Context, id string, msgs []json.RawMessage, state json.RawMessage) error
	Todos(ctx context.Context, id string) ([]planning.TodoItem, error)
	SaveTodos(ctx context.Context, id string, items []planning.TodoItem) error

	// The bot's session records.
	PutSession(ctx context.Context, rec store.SessionRecord) error
	FindThread(ctx context.Context, channel, thread string) (store.SessionRecord, error)
	ListChannel(ctx context.Context, channel string) ([]store.SessionRecord, error)
	ListOwner(ctx context.Context, owner string, limit int) ([]store.SessionRecord, error)
	ListActive(ctx context.Context) ([]store.SessionMeta, error)

	// Channel settings.
	ChannelSetting(ctx context.Context, channel, key string) (string, error)
	SetChannelSetting(ctx context.Context, channel, key, value string) error

	// New sessions' starts.
	PutStart(ctx context.Context, st store.Start) error
	Starts(ctx context.Context) ([]store.Start, error)
	DeleteStart(ctx context.Context, id string) error

	// Dedup.
	Claim(ctx context.Context, keys []string, at time.Time) ([]bool, error)
	Claimed(ctx context.Context, since time.Time) ([]string, error)

	// Automations: occurrences and each automation's state.
	RecordOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, bool, error)
	Occurrence(ctx context.Context, automation, key string) (store.Occurrence, error)
	UpdateOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, error)
	ClaimOccurrences(ctx context.Context, state store.OccurrenceState, before time.Time, owner string, now time.Time, limit int) ([]store.Occurrence, error)
	Occurrences(ctx context.Context, automation string, state store.OccurrenceState, limit int) ([]store.Occurrence, error)
	SettledOccurrences(ctx context.Context, from, before time.Time, limit int) ([]store.Occurrence, error)
	ForgetOccurrences(ctx context.Context, olds []store.Occurrence) (int, error)
	AutomationState(ctx context.Context, name string) (store.AutomationState, error)
	AutomationStates(ctx context.Context) ([]store.AutomationState, error)
	PutAutomationState(ctx context.Context, st store.AutomationState) (store.AutomationState, error)
	AddAutomationSpend(ctx context.Context, name, day string, tokens int64) (int64, error)

	// Health: whether the backend answers (h9's /readyz).
	Ping(ctx context.Context) error
}

// Reopen closes the backend Fresh returned and opens the same data again,
// as a restart of h9 would. The suite does not use the old one after it.
type Reopen func(t *testing.T) Backend

// Fresh opens a backend on new, empty data for one test.
type Fresh func(t *testing.T) (Backend, Reopen)

// Run runs every conformance test against backends made by fresh.
func Run(t *testing.T, fresh Fresh) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.test(t, fresh) })
	}
}

type testCase struct {
	name string
	test func(t *testing.T, fresh Fresh)
}

// cases lists the suite, grouped by what relies on it.
var cases = concat(agentCases, sessionCases, settingCases, startCases, automationCases, dedupCases, concurrencyCases, healthCases)

func concat(groups ...[]testCase) []testCase {
	var out []testCase
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// open is a fresh backend, when a test needs no reopen.
func open(t *testing.T, fresh Fresh) Backend {
	b, _ := fresh(t)
	return b
}

// msgs encodes test messages the way the agent does: one JSON object each.
func msgs(contents ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(contents))
	for i, c := range contents {
		data, _ := json.Marshal(map[string]string{"role": "user", "content": c})
		out[i] = data
	}
	return out
}

// sameJSON reports whether two encodings mean the same value (a backend
// may store JSON normalised, as PostgreSQL's jsonb does).
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// wantMessages fails unless got holds want's messages, in order.
func wantMessages(t *testing.T, got, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d: %s", len(got), len(want), got)
	}
	for i := range want {
		if !sameJSON(got[i], want[i]) {
			t.Fatalf("message %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// wantTodos fails unless got is want (nil and empty are both "no todos").
func wantTodos(t *testing.T, got, want []planning.TodoItem) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("todos = %+v, want %+v", got, want)
	}
}

func todos(statuses ...planning.TodoStatus) []planning.TodoItem {
	out := make([]planning.TodoItem, len(statuses))
	for i, s := range statuses {
		out[i] = planning.TodoItem{ID: string(rune('a' + i)), Content: "task " + string(rune('a'+i)), Status: s}
	}
	return out
}

// at is a fixed time at microsecond precision, offset by d.
func at(d time.Duration) time.Time {
	return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(d).Truncate(time.Microsecond)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// healthCases: what h9's readiness check relies on.
var healthCases = []testCase{
	{"PingAnswers", testPingAnswers},
}

// A backend that works answers Ping, before and after writes and after a
// reopen; a Ping whose context is done fails as a backend failure, so a
// readiness check with a deadline never reports a store that did not answer.
func testPingAnswers(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	must(t, b.Ping(ctx))
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "backend"))
	must(t, b.Ping(ctx))
	b = reopen(t)
	must(t, b.Ping(ctx))
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Ping(done); !errors.Is(err, store.ErrBackend) {
		t.Fatalf("Ping with a cancelled context = %v, want an error wrapping store.ErrBackend", err)
	}
}

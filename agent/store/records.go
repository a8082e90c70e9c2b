package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/h9-app/h9/planning"
)

// AgentSession is what the agent keeps for one session. A session never
// written is the zero value (no messages, no todos, no state).
type AgentSession struct {
	// Messages is the conversation in order, each message encoded by the agent.
	Messages []json.RawMessage
	// Todos is the session's todo list (nil when never written).
	Todos []planning.TodoItem
	// State is the agent's own per-session blob (token usage and the
	// like); nil when never written.
	State json.RawMessage
}

// Step is one atomic commit of a run: its new messages, and optionally the
// todo list and the agent's state, all stored or none.
type Step struct {
	// First is the history index of Messages[0]; it must equal the number
	// of messages already stored (ErrConflict otherwise), so a step only
	// ever appends.
	First    int
	Messages []json.RawMessage
	// Todos, when not nil, replaces the todo list (an empty list clears it).
	Todos *[]planning.TodoItem
	// State, when not nil, replaces the agent's state blob.
	State json.RawMessage
}

// SessionMeta is what a backend indexes about a bot session record.
type SessionMeta struct {
	ID      string // the session id, made by the bot (opaque here)
	Team    string // the Slack team, "" when unknown; recorded, never a lookup key
	Channel string // Slack channel id
	Thread  string // ts of the thread's root message
	Owner   string // Slack user id of who started it
	// Active: a restart must act on the session (a run or an approval was
	// in flight); ListActive returns exactly the active sessions.
	Active bool
	// Updated orders listings, most recent first.
	Updated time.Time
}

// SessionRecord is one bot session: the metadata a backend indexes and the
// bot's own data, opaque to the backend.
type SessionRecord struct {
	Meta SessionMeta
	Data json.RawMessage
}

// Dedup bounds, the same for every backend: a claimed key counts as seen
// for DedupTTL after its claim, and a backend keeps at least the
// DedupLimit most recent claims of that window and at most about 10 %
// more (older ones may be forgotten, and then claim as fresh again).
const (
	DedupTTL   = 24 * time.Hour
	DedupLimit = 20000
)

// Check refuses metadata no backend can index: an empty id, channel or
// thread, or a NUL byte in any part (bbolt's key separator, and a byte
// PostgreSQL's text refuses). Every backend calls it before a write.
func (m SessionMeta) Check() error {
	for _, part := range []string{m.ID, m.Channel, m.Thread} {
		if part == "" {
			return fmt.Errorf("%w: id %q, channel %q, thread %q: none may be empty", ErrInvalid, m.ID, m.Channel, m.Thread)
		}
	}
	if strings.IndexByte(m.ID+m.Channel+m.Thread+m.Owner+m.Team, 0) >= 0 {
		return fmt.Errorf("%w: id %q, channel %q, thread %q, owner %q, team %q: a NUL byte", ErrInvalid, m.ID, m.Channel, m.Thread, m.Owner, m.Team)
	}
	return nil
}

// Start is a new session's command between the moment h9 took it and its
// record's first commit: the thread's root message is posted in between,
// so a process that stops there leaves the start behind for the next one
// to finish (bot/starts.go). Data is the bot's, opaque to the backend.
type Start struct {
	ID      string
	Channel string
	At      time.Time
	Data    json.RawMessage
}

// EncodeTodos is a todo list as every backend stores it: nil for no
// change (a nil pointer), "[]" for an empty list, else its JSON.
func EncodeTodos(items *[]planning.TodoItem) ([]byte, error) {
	if items == nil {
		return nil, nil
	}
	if *items == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(*items)
}

// Sentinel errors. Every error a backend returns wraps one of them with %w
// and names what it was doing (and the session); match with errors.Is.
var (
	// ErrNotFound: no record under that key (a bot session, say). Agent
	// sessions are never "not found": a session never written reads empty.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a write that does not fit what is stored, such as a step
	// appended at an index other than the history's length. Nothing of the
	// write was stored.
	ErrConflict = errors.New("conflicting write")
	// ErrInvalid: a record the backend cannot store (an empty id, say).
	ErrInvalid = errors.New("invalid record")
	// ErrCorrupt: stored data that does not decode.
	ErrCorrupt = errors.New("corrupt stored data")
	// ErrBackend: the backend itself failed (I/O, a closed database, a
	// lost connection). The write, if any, did not happen.
	ErrBackend = errors.New("storage backend failed")
)

// Sentinels of leases, with which replicas of h9 share sessions.
var (
	// ErrLeaseHeld: another replica holds an unexpired lease on the key.
	ErrLeaseHeld = errors.New("lease held by another replica")
	// ErrFenced: a write for a session whose lease this replica does not
	// hold (never took, released, or lost to a takeover). Nothing of the
	// write was stored; the replica must drop the session.
	ErrFenced = errors.New("lease lost: write refused")
)

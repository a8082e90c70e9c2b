package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// Store is the storage the engine needs, per session: the conversation,
// the todos and the engine's own state, each step one atomic commit
// (agent/store/boltstore implements it; storetest is its contract). The
// engine writes with a context that a cancelled run does not cancel, so a
// stopped run still stores what it did.
type Store interface {
	// LoadSession reads a session; one never written reads empty.
	LoadSession(ctx context.Context, id string) (store.AgentSession, error)
	// AppendStep stores a step's messages, todos and state in one commit.
	AppendStep(ctx context.Context, id string, st store.Step) error
	// ReplaceHistory rewrites the conversation and state (compaction).
	ReplaceHistory(ctx context.Context, id string, msgs []json.RawMessage, state json.RawMessage) error
	Todos(ctx context.Context, id string) ([]planning.TodoItem, error)
	SaveTodos(ctx context.Context, id string, items []planning.TodoItem) error
}

// sessionState is the engine's own per-session blob in the store, written
// with every step.
type sessionState struct {
	// Total counts the session's tokens over all its runs: planning,
	// execution and compaction's own requests.
	Total Usage `json:"total"`
	// Work is the work rule's log and the completed todos' evidence; it
	// belongs with the todos, and each commit that stores them stores it.
	Work planning.WorkLog `json:"work"`
	// LastPrompt is the prompt_tokens of the last model call: the size of
	// the conversation as the endpoint counted it, which drives compaction.
	LastPrompt int `json:"last_prompt"`
}

// storeError marks a store failure as the agent's ErrStore, keeping the
// store's own sentinel and words (which name the session).
func storeError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrStore, err)
}

// encodeMessages turns messages into what the store keeps, one JSON
// value each (a Message's chat-completions JSON, which the store keeps as
// it is: provider fields such as extra_content must come back). Encoding
// happens before the commit, keeping it short.
func encodeMessages(msgs []Message) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		m.Images = nil // the history keeps the paths, not the bytes
		data, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding message: %w", ErrStore, err)
		}
		out[i] = data
	}
	return out, nil
}

// decodeMessages reads stored messages; go-openai's JSON, which older
// versions stored, reads as Messages too.
func decodeMessages(raw []json.RawMessage) ([]Message, error) {
	out := make([]Message, len(raw))
	for i, data := range raw {
		if err := json.Unmarshal(data, &out[i]); err != nil {
			return nil, fmt.Errorf("%w: %w: message %d: %w", ErrStore, store.ErrCorrupt, i, err)
		}
	}
	return out, nil
}

// encodeState writes the state as json.Marshal would, putting the work
// log's own encoding in as it is: json.Marshal would check and compact it
// byte by byte again, which cost more than writing it.
func encodeState(s sessionState) (json.RawMessage, error) {
	total, err := json.Marshal(s.Total)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding state: %w", ErrStore, err)
	}
	work, err := s.Work.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: encoding state: %w", ErrStore, err)
	}
	b := make([]byte, 0, len(total)+len(work)+48)
	b = append(append(b, `{"total":`...), total...)
	b = append(append(b, `,"work":`...), work...)
	b = strconv.AppendInt(append(b, `,"last_prompt":`...), int64(s.LastPrompt), 10)
	return append(b, '}'), nil
}

// decodeState reads the state blob; a session without one starts at zero.
func decodeState(raw json.RawMessage) (sessionState, error) {
	var s sessionState
	if raw == nil {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("%w: %w: state: %w", ErrStore, store.ErrCorrupt, err)
	}
	return s, nil
}

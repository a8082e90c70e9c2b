package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// LoadSession reads everything the agent stored for a session; a session
// never written reads as the zero AgentSession.
func (s *Store) LoadSession(ctx context.Context, id string) (store.AgentSession, error) {
	var sess store.AgentSession
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		sess = store.AgentSession{} // what a lost attempt read is read again
		return q.SendBatch(ctx, loadBatch(id, &sess)).Close()
	})
	if err != nil {
		return store.AgentSession{}, wrap("loading session "+id, err)
	}
	return sess, nil
}

// loadBatch reads session id into sess in one round trip.
func loadBatch(id string, sess *store.AgentSession) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("SELECT todos, state FROM h9_agent_sessions WHERE id = $1", id).QueryRow(func(row pgx.Row) error {
		var todos []byte
		err := row.Scan(&todos, &sess.State)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		sess.Todos, err = decodeTodos(todos)
		return err
	})
	b.Queue("SELECT body FROM h9_agent_messages WHERE session_id = $1 ORDER BY idx", id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var body []byte
			if err := rows.Scan(&body); err != nil {
				return err
			}
			sess.Messages = append(sess.Messages, body)
		}
		return rows.Err()
	})
	return b
}

// AppendStep stores a step in one transaction: its messages at First,
// First+1, …, and the todos and state when set. First must be the number
// of messages stored (ErrConflict otherwise, and nothing is written).
func (s *Store) AppendStep(ctx context.Context, id string, st store.Step) error {
	what := "appending a step to session " + id
	if !validText(id) {
		return fmt.Errorf("%w: %s: session id %q", store.ErrInvalid, what, id)
	}
	todos, err := store.EncodeTodos(st.Todos)
	if err != nil {
		return fmt.Errorf("%w: %s: encoding todos: %w", store.ErrInvalid, what, err)
	}
	key, f, err := s.sessionFence(id, what)
	if err != nil {
		return err
	}
	msgs := bodies(st.Messages)
	err = s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		_, err := q.Exec(ctx, "SELECT h9_fenced_step($1, $2, $3, $4, $5, $6, $7, $8, $9)",
			key.Channel, key.Thread, f.owner, f.token, id, st.First, msgs, todos, nullable(st.State))
		if a.again && isCode(err, codeStepConflict) && stepCommitted(ctx, q, id, st.First, msgs) {
			return nil // the lost attempt committed it
		}
		return err
	})
	return wrapNil(what, err)
}

// stepCommitted reports whether the step of msgs at first is what the
// session's history ends with: a step whose commit was not acknowledged
// then finds its history length taken, by itself. Its fence held (the
// step was fenced), so no other writer can have added those messages.
func stepCommitted(ctx context.Context, q pooled, id string, first int, msgs [][]byte) bool {
	if len(msgs) == 0 {
		return false // an empty step commits again as it is: no conflict
	}
	var n int
	var last []byte
	err := q.QueryRow(ctx, `SELECT s.messages, m.body FROM h9_agent_sessions s
		JOIN h9_agent_messages m ON m.session_id = s.id AND m.idx = $2 WHERE s.id = $1`,
		id, first+len(msgs)-1).Scan(&n, &last)
	return err == nil && n == first+len(msgs) && bytes.Equal(last, msgs[len(msgs)-1])
}

// ReplaceHistory rewrites the whole conversation and the state atomically
// (after compaction); the todos stay.
func (s *Store) ReplaceHistory(ctx context.Context, id string, msgs []json.RawMessage, state json.RawMessage) error {
	what := "replacing the history of session " + id
	if !validText(id) {
		return fmt.Errorf("%w: %s: session id %q", store.ErrInvalid, what, id)
	}
	b := &pgx.Batch{}
	if err := s.fenceSession(b, id, what); err != nil {
		return err
	}
	b.Queue("INSERT INTO h9_agent_sessions (id) VALUES ($1) ON CONFLICT DO NOTHING", id)
	b.Queue("SELECT 1 FROM h9_agent_sessions WHERE id = $1 FOR UPDATE", id)
	b.Queue("DELETE FROM h9_agent_messages WHERE session_id = $1", id)
	if len(msgs) > 0 {
		b.Queue(`INSERT INTO h9_agent_messages (session_id, idx, body)
			SELECT $1, m.i - 1, m.body FROM unnest($2::bytea[]) WITH ORDINALITY AS m(body, i)`, id, bodies(msgs))
	}
	b.Queue("UPDATE h9_agent_sessions SET messages = $2, state = coalesce($3, state) WHERE id = $1",
		id, len(msgs), nullable(state))
	if err := s.batch(ctx, b); err != nil {
		return wrap(what, err)
	}
	return nil
}

// Todos reads the session's todo list (nil when never written).
func (s *Store) Todos(ctx context.Context, id string) ([]planning.TodoItem, error) {
	var data []byte
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		return q.QueryRow(ctx, "SELECT todos FROM h9_agent_sessions WHERE id = $1", id).Scan(&data)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("reading the todos of session "+id, err)
	}
	items, err := decodeTodos(data)
	if err != nil {
		return nil, fmt.Errorf("reading the todos of session %s: %w", id, err)
	}
	return items, nil
}

// SaveTodos replaces the session's todo list.
func (s *Store) SaveTodos(ctx context.Context, id string, items []planning.TodoItem) error {
	what := "saving the todos of session " + id
	if !validText(id) {
		return fmt.Errorf("%w: %s: session id %q", store.ErrInvalid, what, id)
	}
	data, err := store.EncodeTodos(&items)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	b := &pgx.Batch{}
	if err := s.fenceSession(b, id, what); err != nil {
		return err
	}
	b.Queue(`INSERT INTO h9_agent_sessions (id, todos) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET todos = EXCLUDED.todos`, id, data)
	if err := s.batch(ctx, b); err != nil {
		return wrap(what, err)
	}
	return nil
}

// bodies are messages as a bytea[] parameter.
func bodies(msgs []json.RawMessage) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}

// nullable is a blob parameter: NULL for "unchanged" (nil).
func nullable(v json.RawMessage) []byte {
	if v == nil {
		return nil
	}
	return v
}

func decodeTodos(v []byte) ([]planning.TodoItem, error) {
	if v == nil || string(v) == "null" {
		return nil, nil
	}
	var items []planning.TodoItem
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, fmt.Errorf("%w: todos: %w", store.ErrCorrupt, err)
	}
	return items, nil
}

package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// LoadSession reads everything the agent stored for a session; a session
// never written reads as the zero AgentSession.
func (s *Store) LoadSession(ctx context.Context, id string) (store.AgentSession, error) {
	var sess store.AgentSession
	err := s.view(ctx, "loading session "+id, func(tx *bolt.Tx) error {
		b := agentSession(tx, id)
		if b == nil {
			return nil
		}
		var err error
		if sess.Todos, err = decodeTodos(b); err != nil {
			return err
		}
		sess.State = clone(b.Get(keyState))
		if mb := b.Bucket(bucketMsgs); mb != nil {
			sess.Messages = make([]json.RawMessage, 0, messageCount(mb))
			return mb.ForEach(func(_, v []byte) error {
				sess.Messages = append(sess.Messages, clone(v))
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return store.AgentSession{}, err
	}
	return sess, nil
}

// AppendStep stores a step in one transaction: its messages at First,
// First+1, …, and the todos and state when set. First must be the number
// of messages stored (ErrConflict otherwise, and nothing is written).
func (s *Store) AppendStep(ctx context.Context, id string, st store.Step) error {
	what := "appending a step to session " + id
	if err := checkID(id); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	todos, err := store.EncodeTodos(st.Todos)
	if err != nil {
		return fmt.Errorf("%w: %s: encoding todos: %w", store.ErrInvalid, what, err)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		b, err := agentSessionRW(tx, id)
		if err != nil {
			return err
		}
		mb, err := b.CreateBucketIfNotExists(bucketMsgs)
		if err != nil {
			return err
		}
		if n := messageCount(mb); st.First != n {
			return fmt.Errorf("%w: step starts at message %d, the history holds %d", store.ErrConflict, st.First, n)
		}
		if err := putMessages(mb, st.First, st.Messages); err != nil {
			return err
		}
		return putTodosAndState(b, todos, st.State)
	})
}

// ReplaceHistory rewrites the whole conversation and the state atomically
// (after compaction); the todos stay.
func (s *Store) ReplaceHistory(ctx context.Context, id string, msgs []json.RawMessage, state json.RawMessage) error {
	what := "replacing the history of session " + id
	if err := checkID(id); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		b, err := agentSessionRW(tx, id)
		if err != nil {
			return err
		}
		if b.Bucket(bucketMsgs) != nil {
			if err := b.DeleteBucket(bucketMsgs); err != nil {
				return err
			}
		}
		mb, err := b.CreateBucket(bucketMsgs)
		if err != nil {
			return err
		}
		if err := putMessages(mb, 0, msgs); err != nil {
			return err
		}
		return putTodosAndState(b, nil, state)
	})
}

// Todos reads the session's todo list (nil when never written).
func (s *Store) Todos(ctx context.Context, id string) ([]planning.TodoItem, error) {
	var items []planning.TodoItem
	err := s.view(ctx, "reading the todos of session "+id, func(tx *bolt.Tx) error {
		b := agentSession(tx, id)
		if b == nil {
			return nil
		}
		var err error
		items, err = decodeTodos(b)
		return err
	})
	return items, err
}

// SaveTodos replaces the session's todo list.
func (s *Store) SaveTodos(ctx context.Context, id string, items []planning.TodoItem) error {
	what := "saving the todos of session " + id
	if err := checkID(id); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	data, err := store.EncodeTodos(&items)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		b, err := agentSessionRW(tx, id)
		if err != nil {
			return err
		}
		return putTodosAndState(b, data, nil)
	})
}

// agentSession returns the session's bucket, nil when it was never written.
func agentSession(tx *bolt.Tx, id string) *bolt.Bucket {
	if id == "" {
		return nil
	}
	return tx.Bucket(bucketAgent).Bucket([]byte(id))
}

func agentSessionRW(tx *bolt.Tx, id string) (*bolt.Bucket, error) {
	return tx.Bucket(bucketAgent).CreateBucketIfNotExists([]byte(id))
}

// messageCount is the index after the last stored message.
func messageCount(mb *bolt.Bucket) int {
	k, _ := mb.Cursor().Last()
	if len(k) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(k)) + 1
}

func putMessages(mb *bolt.Bucket, first int, msgs []json.RawMessage) error {
	mb.FillPercent = 1 // keys only ever grow: pack pages full
	for i, m := range msgs {
		if err := mb.Put(msgKey(first+i), m); err != nil {
			return err
		}
	}
	return nil
}

// putTodosAndState writes the encoded todos and the state, each when set.
func putTodosAndState(b *bolt.Bucket, todos, state []byte) error {
	if todos != nil {
		if err := b.Put(keyTodos, todos); err != nil {
			return err
		}
	}
	if state != nil {
		return b.Put(keyState, state)
	}
	return nil
}

func msgKey(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

func decodeTodos(b *bolt.Bucket) ([]planning.TodoItem, error) {
	v := b.Get(keyTodos)
	if v == nil || bytes.Equal(v, []byte("null")) {
		return nil, nil
	}
	var items []planning.TodoItem
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, fmt.Errorf("%w: todos: %w", store.ErrCorrupt, err)
	}
	return items, nil
}

// checkID refuses ids bbolt cannot key a bucket or index entry by.
func checkID(id string) error {
	if id == "" || bytes.IndexByte([]byte(id), keySeparator) >= 0 {
		return fmt.Errorf("%w: session id %q", store.ErrInvalid, id)
	}
	return nil
}

// clone copies a value out of bbolt's memory (nil stays nil).
func clone(v []byte) []byte {
	if v == nil {
		return nil
	}
	return bytes.Clone(v)
}

package agent

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/h9-app/h9/agent/groupcommit"
	"github.com/h9-app/h9/planning"
	openai "github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"
)

// Layout: agent_sessions/<session id>/ holds the keys below and a nested
// bucket "msgs" with one key per message (8-byte big-endian index), so a
// step appends its new messages instead of rewriting the conversation.
var (
	bucketSessions = []byte("agent_sessions")
	bucketMsgs     = []byte("msgs")
	keyMode        = []byte("mode")
	keyTodos       = []byte("todos")
	keyUsage       = []byte("usage")
)

// sessionUsage is the token accounting kept per session.
type sessionUsage struct {
	Total Usage `json:"total"`
	// LastPrompt is the prompt_tokens of the last model call: the size of
	// the conversation as the endpoint counted it, which drives compaction.
	LastPrompt int `json:"last_prompt"`
}

// sessionState is what a run loads at start besides the todos, which
// Engine.acquire loads.
type sessionState struct {
	Mode     planning.PlanMode
	Messages []openai.ChatCompletionMessage
	Usage    sessionUsage
}

type store struct{ db *bolt.DB }

func (s store) init() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketSessions)
		return err
	})
}

// session returns the session's bucket, nil when it was never written.
func session(tx *bolt.Tx, id string) *bolt.Bucket {
	return tx.Bucket(bucketSessions).Bucket([]byte(id))
}

// sessionRW returns the session's bucket, creating it.
func sessionRW(tx *bolt.Tx, id string) (*bolt.Bucket, error) {
	return tx.Bucket(bucketSessions).CreateBucketIfNotExists([]byte(id))
}

// load reads the whole session. Decoding happens inside the transaction,
// so no bbolt memory escapes it.
func (s store) load(id string) (st sessionState, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := session(tx, id)
		if b == nil {
			return nil
		}
		if st.Mode, err = decodeMode(b.Get(keyMode)); err != nil {
			return err
		}
		if err := decodeJSON(b.Get(keyUsage), &st.Usage); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
		msgs := b.Bucket(bucketMsgs)
		if msgs == nil {
			return nil
		}
		return msgs.ForEach(func(_, v []byte) error {
			var m openai.ChatCompletionMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("message: %w", err)
			}
			st.Messages = append(st.Messages, m)
			return nil
		})
	})
	if err != nil {
		return sessionState{}, fmt.Errorf("%w: loading session %s: %v", ErrStore, id, err)
	}
	return st, nil
}

func (s store) mode(id string) (m planning.PlanMode, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if b := session(tx, id); b != nil {
			m, err = decodeMode(b.Get(keyMode))
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%w: reading mode of %s: %v", ErrStore, id, err)
	}
	return m, nil
}

func (s store) setMode(id string, m planning.PlanMode) error {
	return s.update(id, "saving mode", func(b *bolt.Bucket) error {
		return b.Put(keyMode, encodeMode(m))
	})
}

func (s store) todos(id string) (items []planning.TodoItem, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if b := session(tx, id); b != nil {
			return decodeJSON(b.Get(keyTodos), &items)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: reading todos of %s: %v", ErrStore, id, err)
	}
	return items, nil
}

func (s store) saveTodos(id string, items []planning.TodoItem) error {
	data, err := json.Marshal(items)
	if err != nil {
		return err
	}
	return s.update(id, "saving todos", func(b *bolt.Bucket) error { return b.Put(keyTodos, data) })
}

// step is what one commit of a run stores: one commit per step however
// many tool results it had, todo_write included.
type step struct {
	first int // the conversation index of msgs[0]
	msgs  []openai.ChatCompletionMessage
	usage sessionUsage
	todos *[]planning.TodoItem // nil: unchanged
	mode  *planning.PlanMode   // nil: unchanged
}

// appendStep stores a step in one transaction.
func (s store) appendStep(id string, st step) error {
	encoded, usage, err := encodeStep(st.msgs, st.usage)
	if err != nil {
		return err
	}
	var todoData []byte
	if st.todos != nil {
		if todoData, err = json.Marshal(*st.todos); err != nil {
			return fmt.Errorf("%w: encoding todos: %v", ErrStore, err)
		}
	}
	return s.update(id, "saving step", func(b *bolt.Bucket) error {
		if todoData != nil {
			if err := b.Put(keyTodos, todoData); err != nil {
				return err
			}
		}
		if st.mode != nil {
			if err := b.Put(keyMode, encodeMode(*st.mode)); err != nil {
				return err
			}
		}
		if len(encoded) == 0 {
			return nil
		}
		return putMessages(b, st.first, encoded, usage)
	})
}

// replaceMessages rewrites the conversation (after compaction) atomically.
func (s store) replaceMessages(id string, msgs []openai.ChatCompletionMessage, u sessionUsage) error {
	encoded, usage, err := encodeStep(msgs, u)
	if err != nil {
		return err
	}
	return s.update(id, "replacing conversation", func(b *bolt.Bucket) error {
		if b.Bucket(bucketMsgs) != nil {
			if err := b.DeleteBucket(bucketMsgs); err != nil {
				return err
			}
		}
		return putMessages(b, 0, encoded, usage)
	})
}

// putMessages stores encoded messages at indexes first, first+1, … in the
// session's message bucket (created if missing), then the usage.
func putMessages(b *bolt.Bucket, first int, encoded [][]byte, usage []byte) error {
	mb, err := b.CreateBucketIfNotExists(bucketMsgs)
	if err != nil {
		return err
	}
	mb.FillPercent = 1 // keys only ever grow: pack pages full
	for i, data := range encoded {
		if err := mb.Put(msgKey(first+i), data); err != nil {
			return err
		}
	}
	return b.Put(keyUsage, usage)
}

// update writes one session in a transaction shared with concurrent
// sessions' writes (group commit: one fsync pair for all of them).
func (s store) update(id, what string, f func(*bolt.Bucket) error) error {
	err := groupcommit.Update(s.db, func(tx *bolt.Tx) error {
		b, err := sessionRW(tx, id)
		if err != nil {
			return err
		}
		return f(b)
	})
	if err != nil {
		return fmt.Errorf("%w: %s for %s: %v", ErrStore, what, id, err)
	}
	return nil
}

// encodeStep marshals outside the write transaction, keeping it short.
func encodeStep(msgs []openai.ChatCompletionMessage, u sessionUsage) ([][]byte, []byte, error) {
	encoded := make([][]byte, len(msgs))
	for i, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: encoding message: %v", ErrStore, err)
		}
		encoded[i] = data
	}
	usage, err := json.Marshal(u)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: encoding usage: %v", ErrStore, err)
	}
	return encoded, usage, nil
}

func msgKey(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

func encodeMode(m planning.PlanMode) []byte { return []byte(strconv.Itoa(int(m))) }

func decodeMode(v []byte) (planning.PlanMode, error) {
	if v == nil {
		return planning.PlanModeDefault, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || !planning.PlanMode(n).Valid() {
		return 0, fmt.Errorf("bad mode %q", v)
	}
	return planning.PlanMode(n), nil
}

// decodeJSON leaves dst untouched for a missing key.
func decodeJSON(v []byte, dst any) error {
	if v == nil {
		return nil
	}
	return json.Unmarshal(v, dst)
}

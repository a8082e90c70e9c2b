package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// Fencing. With a replica name, every write of a session is fenced: a step
// and a record are one statement that fences first (h9_fenced_step,
// h9_put_session), the rarer writes a batch whose first statement is
// h9_fence. The fence locks the thread's lease row until the write
// commits, so a takeover (which updates that row) waits for the write,
// and it undoes the write unless this replica still holds
// the lease with the token it acquired, unexpired by the database's
// clock. A replica paused past its lease thus writes nothing once another
// replica took it over (nor after it lapsed), whatever its goroutines
// were doing when it stopped.
//
// The bot's records name their thread; the agent's writes carry only a
// session id, so the store learns which thread a session lives in from
// the records it reads or writes under a lease (holds.bind). An agent
// write for a session it never learned is refused: the bot always reads
// or saves a session's record before its runs write.

// fenceKey queues the fence of key's lease into b, or refuses at once
// when this replica does not hold it (or it lapsed by the local clock).
func (s *Store) fenceKey(b *pgx.Batch, key store.LeaseKey, what string) error {
	if s.holds == nil {
		return nil
	}
	l, ok := s.holds.get(key)
	if !ok {
		return fmt.Errorf("%w: %s: replica %s holds no lease on %s", store.ErrFenced, what, s.holds.replica, key)
	}
	b.Queue("SELECT h9_fence($1, $2, $3, $4)", key.Channel, key.Thread, l.Owner, l.Token)
	return nil
}

// fenceArgs are a write's fence as the parameters of the one-statement
// writes (h9_fenced_step, h9_put_session): owner and token, nil (SQL
// NULL) without a replica name.
type fenceArgs struct{ owner, token any }

// fenceOf is fenceKey for the one-statement writes.
func (s *Store) fenceOf(key store.LeaseKey, what string) (fenceArgs, error) {
	if s.holds == nil {
		return fenceArgs{}, nil
	}
	l, ok := s.holds.get(key)
	if !ok {
		return fenceArgs{}, fmt.Errorf("%w: %s: replica %s holds no lease on %s", store.ErrFenced, what, s.holds.replica, key)
	}
	return fenceArgs{owner: l.Owner, token: l.Token}, nil
}

// sessionFence is fenceOf for the thread of an agent session: the key
// and the fence.
func (s *Store) sessionFence(id, what string) (store.LeaseKey, fenceArgs, error) {
	if s.holds == nil {
		return store.LeaseKey{}, fenceArgs{}, nil
	}
	l, ok := s.holds.forSession(id)
	if !ok {
		return store.LeaseKey{}, fenceArgs{}, fmt.Errorf("%w: %s: replica %s holds no lease covering session %s", store.ErrFenced, what, s.holds.replica, id)
	}
	return l.Key, fenceArgs{owner: l.Owner, token: l.Token}, nil
}

// fenceSession is fenceKey for the thread of an agent session.
func (s *Store) fenceSession(b *pgx.Batch, id, what string) error {
	if s.holds == nil {
		return nil
	}
	l, ok := s.holds.forSession(id)
	if !ok {
		return fmt.Errorf("%w: %s: replica %s holds no lease covering session %s", store.ErrFenced, what, s.holds.replica, id)
	}
	return s.fenceKey(b, l.Key, what)
}

// bind notes a record's thread for the fencing of its agent session.
func (s *Store) bind(m store.SessionMeta) {
	if s.holds != nil {
		s.holds.bind(m.ID, store.LeaseKey{Channel: m.Channel, Thread: m.Thread})
	}
}

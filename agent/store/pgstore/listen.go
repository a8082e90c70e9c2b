package pgstore

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/workspace/netx"
)

// listenSuffix marks the listening connection's application_name.
const listenSuffix = "-listen"

// Reconnection backoff of the listening connection.
const (
	listenRetryFirst = 100 * time.Millisecond
	listenRetryMax   = 5 * time.Second
)

// listener keeps a connection of its own LISTENing to inboxChannel and
// calls the registered function with each notified thread. Notifications
// sent while it was disconnected are lost, so after every (re)connection
// it calls the function for each thread with items waiting.
type listener struct {
	cfg *pgx.ConnConfig
	log *slog.Logger
	mu  sync.Mutex
	f   func(store.LeaseKey)
}

// OnInbox registers f, called on the listening goroutine with the thread
// of every inbox item posted (and of every thread with items waiting,
// after each reconnection). f must not block.
func (s *Store) OnInbox(f func(store.LeaseKey)) {
	s.listen.mu.Lock()
	s.listen.f = f
	s.listen.mu.Unlock()
}

func (l *listener) notify(key store.LeaseKey) {
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f != nil {
		f(key)
	}
}

// run listens until ctx ends, reconnecting with backoff.
func (l *listener) run(ctx context.Context) {
	backoff := netx.Backoff{Base: listenRetryFirst, Max: listenRetryMax}
	for n := 1; ctx.Err() == nil; n++ {
		err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := backoff.Step(n)
		l.log.Warn("listening for inbox items; reconnecting", "err", err, "in", wait)
		if netx.Sleep(ctx, wait) != nil {
			return
		}
	}
}

// session is one connection's life: LISTEN, report the waiting threads,
// then every notification, until the connection fails.
func (l *listener) session(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+inboxChannel); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, "SELECT DISTINCT channel, thread FROM h9_inbox")
	if err != nil {
		return err
	}
	var k store.LeaseKey
	var waiting []store.LeaseKey
	if _, err := pgx.ForEachRow(rows, []any{&k.Channel, &k.Thread}, func() error { waiting = append(waiting, k); return nil }); err != nil {
		return err
	}
	for _, k := range waiting {
		l.notify(k)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var p notifyPayload
		if json.Unmarshal([]byte(n.Payload), &p) == nil && p.Channel != "" {
			l.notify(store.LeaseKey{Channel: p.Channel, Thread: p.Thread})
		}
	}
}

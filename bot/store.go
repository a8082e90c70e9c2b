package bot

import (
	"context"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// Store is the storage the bot needs (agent/store/boltstore implements it;
// agent/store/storetest is its contract). Its parts are declared apart,
// for the code that uses each.
type Store interface {
	SessionStore
	DedupStore
	ChannelSettings
	StartLog
}

// SessionStore keeps the sessions' records, indexed by thread, owner and
// whether a restart must act on them (Meta.Active).
type SessionStore interface {
	PutSession(ctx context.Context, rec store.SessionRecord) error
	// FindThread returns a thread's session, or store.ErrNotFound.
	FindThread(ctx context.Context, channel, thread string) (store.SessionRecord, error)
	// ListChannel returns a channel's sessions, oldest thread first.
	ListChannel(ctx context.Context, channel string) ([]store.SessionRecord, error)
	// ListOwner returns a user's sessions, most recently updated first.
	ListOwner(ctx context.Context, owner string, limit int) ([]store.SessionRecord, error)
	ListActive(ctx context.Context) ([]store.SessionMeta, error)
}

// DedupStore remembers the Slack deliveries h9 has seen, across restarts
// (and, with a shared backend, across replicas).
type DedupStore interface {
	// Claim records keys as seen at `at` and reports which were new.
	Claim(ctx context.Context, keys []string, at time.Time) (fresh []bool, err error)
	// Claimed lists the keys claimed since a time, oldest first.
	Claimed(ctx context.Context, since time.Time) ([]string, error)
}

// ChannelSettings keeps small per-channel settings ("" = unset), such as
// a channel's default repository.
type ChannelSettings interface {
	ChannelSetting(ctx context.Context, channel, key string) (string, error)
	SetChannelSetting(ctx context.Context, channel, key, value string) error
}

// StartLog keeps a new session's command from before its root message is
// posted until its record is first stored, so a process stopped in
// between leaves something the next one finishes (starts.go).
type StartLog interface {
	PutStart(ctx context.Context, st store.Start) error
	// Starts lists the starts recorded, oldest first.
	Starts(ctx context.Context) ([]store.Start, error)
	DeleteStart(ctx context.Context, id string) error
}

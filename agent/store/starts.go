package store

import (
	"encoding/json"
	"time"
)

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

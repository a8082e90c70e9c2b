package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Automations start sessions by themselves (ARCHITECTURE.md, "Automations"):
// each occurrence of a trigger (a schedule's time, an issue's event, a
// failing head, a message, a webhook delivery) is recorded here under a key
// before anything is posted, so that in a fleet exactly one replica starts
// it and a restart, a redelivery or a replay never starts two. Beside the
// occurrences, each automation has one AutomationState: what its engine
// must remember between occurrences (paused, failures in a row, the
// catch-up watermark, forge cursors, its last session, its daily spend).
//
// Settled occurrences are pruned by the engine once they are old
// enough that no repeat of their key can come (SettledOccurrences lists
// the candidates, ForgetOccurrences forgets those still as listed).
//
// Both records are written compare-and-swap: a write carries the Version
// it read and is refused with ErrConflict when another writer (another
// replica) got there first; the backend sets the stored Version.

// OccurrenceState is where an occurrence is on its way to a session.
type OccurrenceState string

// The occurrence states. Recorded and queued ones are pending: the engine
// still owes them a start (ClaimOccurrences finds the recorded ones a
// stopped replica left behind).
const (
	OccurrenceRecorded     OccurrenceState = "recorded"     // taken by a replica; its session not started yet
	OccurrenceQueued       OccurrenceState = "queued"       // waits for the automation's open session (overlap: queue)
	OccurrenceStarted      OccurrenceState = "started"      // its session started, in Channel/Thread
	OccurrenceFailed       OccurrenceState = "failed"       // could not start; Cause says why
	OccurrenceDeduplicated OccurrenceState = "deduplicated" // a repeat, said as "Again" in Channel/Thread
	OccurrenceSkipped      OccurrenceState = "skipped"      // not started (overlap: skip, a missed schedule); Cause says why
)

// OccurrenceStates lists every state, for metrics and checks.
func OccurrenceStates() []OccurrenceState {
	return []OccurrenceState{OccurrenceRecorded, OccurrenceQueued, OccurrenceStarted, OccurrenceFailed, OccurrenceDeduplicated, OccurrenceSkipped}
}

// Known reports whether this h9 knows the state. A record in a state it
// does not know was written by a newer h9: it is left alone.
func (s OccurrenceState) Known() bool {
	for _, k := range OccurrenceStates() {
		if s == k {
			return true
		}
	}
	return false
}

// Pending reports whether the occurrence still waits for its start.
// A pending occurrence is never pruned (ForgetOccurrences keeps it).
func (s OccurrenceState) Pending() bool { return s == OccurrenceRecorded || s == OccurrenceQueued }

// MaxOccurrenceKey bounds an occurrence's key and dedupe key, in bytes
// (longer keys, from a template, are hashed by the engine).
const MaxOccurrenceKey = 512

// Occurrence is one occurrence of an automation's trigger, keyed by
// (Automation, Key).
type Occurrence struct {
	Automation string // the automation's name (a repository's: <repo>/<name>)
	Key        string // unique within the automation: "schedule:<time>", "webhook:<hash>", …
	State      OccurrenceState
	// Dedupe is the key that makes a repeat an "Again" reply, "" for none.
	Dedupe string
	// Channel and Thread are the session's thread once known (started),
	// or the thread a repeat was said in (deduplicated).
	Channel, Thread string
	Cause           string          // failed or skipped: why, in a user's words
	Data            json.RawMessage // the engine's own (the request to start), opaque here
	Recorded        time.Time       // when it was first recorded
	Owner           string          // the replica that took it on last
	Claimed         time.Time       // when Owner took it on
	// Version is the backend's: 1 once recorded, one more per update.
	Version int64
}

// Check refuses an occurrence no backend can store.
func (o Occurrence) Check() error {
	switch {
	case o.Automation == "" || o.Key == "":
		return fmt.Errorf("%w: occurrence %q of %q: an automation and a key are needed", ErrInvalid, o.Key, o.Automation)
	case len(o.Key) > MaxOccurrenceKey || len(o.Dedupe) > MaxOccurrenceKey:
		return fmt.Errorf("%w: occurrence of %q: a key of over %d bytes", ErrInvalid, o.Automation, MaxOccurrenceKey)
	case strings.IndexByte(o.Automation+o.Key+o.Dedupe+o.Channel+o.Thread+o.Owner+o.Cause, 0) >= 0:
		return fmt.Errorf("%w: occurrence %q of %q: a NUL byte", ErrInvalid, o.Key, o.Automation)
	case !o.State.Known():
		return fmt.Errorf("%w: occurrence %q of %q: unknown state %q", ErrInvalid, o.Key, o.Automation, o.State)
	case o.Data != nil && !json.Valid(o.Data):
		return fmt.Errorf("%w: occurrence %q of %q: data is not JSON", ErrInvalid, o.Key, o.Automation)
	}
	return nil
}

// Normal is o with its times at the microsecond, the precision every
// backend keeps (PostgreSQL's), so a record reads back as it was written
// whichever backend stores it.
func (o Occurrence) Normal() Occurrence {
	o.Recorded = o.Recorded.Truncate(time.Microsecond)
	o.Claimed = o.Claimed.Truncate(time.Microsecond)
	return o
}

// AutomationState is what an automation's engine remembers, one record
// per automation, by name.
type AutomationState struct {
	Name    string
	Version int64 // the backend's: 1 once created, one more per write
	// FirstLoaded is when h9 first loaded the automation: issue triggers
	// start nothing for what happened before (no backfill).
	FirstLoaded time.Time
	Paused      bool
	PausedBy    string // a Slack user ID, or "h9" after three failed starts
	PausedAt    time.Time
	// Failures counts failed starts in a row; LastCause is the last
	// failure's cause already said in the channel (said once per cause).
	Failures  int
	LastCause string
	// LastFired is the latest schedule occurrence handled (fired or
	// skipped): the catch-up watermark.
	LastFired time.Time
	// LastKey, LastChannel and LastThread name the automation's last
	// session (its occurrence and thread), for the listing and overlap.
	// The thread is empty while that session is starting.
	LastKey                 string
	LastChannel, LastThread string
	// Starts counts the starts that took the automation's session slot:
	// a start takes it (sets LastKey) only if Starts is still what it
	// read when it found the previous session closed, so that of two
	// occurrences at once one starts (overlap).
	Starts int64
	// Cursor is the forge triggers' polling cursor, opaque here.
	Cursor json.RawMessage
	// Day and Spent are the tokens its sessions spent on Day (YYYY-MM-DD,
	// in the day the engine counts by), for daily_budget.
	Day   string
	Spent int64
}

// Check refuses a state no backend can store.
func (s AutomationState) Check() error {
	switch {
	case s.Name == "" || strings.IndexByte(s.Name+s.PausedBy+s.LastCause+s.LastKey+s.LastChannel+s.LastThread+s.Day, 0) >= 0:
		return fmt.Errorf("%w: automation state %q: an empty name or a NUL byte", ErrInvalid, s.Name)
	case s.Cursor != nil && !json.Valid(s.Cursor):
		return fmt.Errorf("%w: automation state %q: the cursor is not JSON", ErrInvalid, s.Name)
	case s.Version < 0 || s.Starts < 0:
		return fmt.Errorf("%w: automation state %q: version %d, starts %d", ErrInvalid, s.Name, s.Version, s.Starts)
	}
	return nil
}

// Normal is s with its times at the microsecond, as Occurrence.Normal.
func (s AutomationState) Normal() AutomationState {
	s.FirstLoaded = s.FirstLoaded.Truncate(time.Microsecond)
	s.PausedAt = s.PausedAt.Truncate(time.Microsecond)
	s.LastFired = s.LastFired.Truncate(time.Microsecond)
	return s
}

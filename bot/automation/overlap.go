package automation

import (
	"context"
	"errors"

	"github.com/h9-app/h9/agent/store"
)

// overlap (ARCHITECTURE.md, "Automations"): an occurrence starts only
// while its automation's previous session is closed, and of occurrences
// that find it closed at once (a burst of webhooks, a webhook and a
// schedule, on one replica or on several) exactly one starts. The
// automation's state holds the session slot: LastKey names the start
// that took it last, and a start takes it by compare-and-swap on
// Starts, the count of starts that took it; the one that finds Starts
// moved on since it looked is skipped or queued, as if it had found the
// session open. Until its thread is known, the slot's start is open.

// lastStart is a session an automation started; recorded is closed once
// the store has it.
type lastStart struct {
	key, channel, thread string
	recorded             chan struct{}
}

// previousOpen reports whether the automation's previous session (other
// than key's own) is open: the one whose start took the slot last (st),
// known by its thread; while that thread is on its way to the store, by
// this process's memory of the start (recent) or by its occurrence: one
// still pending is starting, so open.
func (e *Engine) previousOpen(ctx context.Context, name, key string, st store.AutomationState) (bool, error) {
	if st.LastKey == "" || st.LastKey == key {
		return false, nil
	}
	channel, thread := st.LastChannel, st.LastThread
	if thread == "" {
		e.mu.Lock()
		r, known := e.recent[name]
		e.mu.Unlock()
		if known && r.key == st.LastKey {
			channel, thread = r.channel, r.thread
		} else {
			cctx, cancel := e.ctx(ctx)
			o, err := e.o.Store.Occurrence(cctx, name, st.LastKey)
			cancel()
			switch {
			case errors.Is(err, store.ErrNotFound):
				return false, nil
			case err != nil:
				return false, err
			case o.State.Pending():
				return true, nil // starting
			case o.State != store.OccurrenceStarted || o.Thread == "":
				return false, nil // it did not start
			}
			channel, thread = o.Channel, o.Thread
		}
	}
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	return e.o.Bot.SessionOpen(cctx, channel, thread)
}

// takeSlot makes key the automation's last session, its thread to come,
// if no other start took the slot since st was read; it returns the
// slot's new Starts, 0 when another start took it first. Side by side
// in this process the takes are saved in one batch (stateedits.go), the
// first in it winning; across replicas the state's version decides, and
// the loser's edit, applied again to the winner's state, loses.
func (e *Engine) takeSlot(ctx context.Context, name, key string, st store.AutomationState) (int64, error) {
	var slot int64
	_, err := e.editState(ctx, name, func(s *store.AutomationState) {
		slot = 0
		if s.Starts != st.Starts {
			return
		}
		s.Starts++
		s.LastKey, s.LastChannel, s.LastThread = key, "", ""
		slot = s.Starts
	})
	if err != nil {
		return 0, err
	}
	return slot, nil
}

// releaseSlot gives back the slot a start took whose session did not
// start: the automation's last session is again the one before, unless
// a later start took the slot meanwhile.
func releaseSlot(slot int64, before store.AutomationState) func(*store.AutomationState) {
	return func(s *store.AutomationState) {
		if s.Starts == slot && s.LastThread == "" {
			s.LastKey, s.LastChannel, s.LastThread = before.LastKey, before.LastChannel, before.LastThread
		}
	}
}

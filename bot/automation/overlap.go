package automation

import (
	"context"
	"errors"

	"github.com/h9-app/h9/agent/store"
)

// overlap (ARCHITECTURE.md, "Automations"): an occurrence starts only
// while its automation's previous session is closed, and of occurrences
// that find it closed at once (a burst of webhooks, a webhook and a
// schedule, on one replica or on several) exactly one starts; the
// others are skipped or queued, as if they had found the session open,
// for a session that is starting is open.
//
// In a process, a start of an automation is under way from its look at
// the previous session to the moment its thread is known (starting);
// another start of the automation meanwhile does not wait for it: it is
// skipped or queued at once. Across processes sharing the store (a
// fleet on PostgreSQL) the automation's state holds the session slot:
// a start takes it by compare-and-swap on Starts, the count of starts
// that took it, setting LastKey with the thread to come; one that finds
// Starts moved on since it read the state loses, and one that finds a
// start's LastKey without a thread asks its occurrence: still pending,
// it is starting. A bbolt file has one process, so there the slot in
// memory is the whole of it (Store.Shared), and the webhook's answer
// waits for no commit more.

// lastStart is a session an automation started here; recorded is
// closed once the store has it, gen is its place among the
// automation's starts here.
type lastStart struct {
	key, channel, thread string
	recorded             chan struct{}
	gen                  int64
}

// slot is a start's hold on its automation's session slot; stored is
// the state's Starts it set (0 when the store holds no slot).
type slot struct{ stored int64 }

// takeSlot reports whether the automation's previous session (other
// than key's own) is open, or another start of it is under way; when
// neither, this start holds the slot until started says how it went.
func (e *Engine) takeSlot(ctx context.Context, name, key string, st store.AutomationState) (slot, bool, error) {
	e.mu.Lock()
	busy := e.starting[name]
	e.starting[name] = true
	e.mu.Unlock()
	if busy {
		return slot{}, true, nil // another start's, under way
	}
	open, err := e.previousOpen(ctx, name, key, st)
	var s slot
	if err == nil && !open && e.shared {
		s.stored, err = e.claimSlot(ctx, name, key, st)
		open = s.stored == 0
	}
	if err != nil || open {
		e.started(name, nil)
	}
	return s, open, err
}

// started ends this process's start of the automation: last is its
// session, nil when none started.
func (e *Engine) started(name string, last *lastStart) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.starting, name)
	if last != nil {
		e.begun[name]++
		last.gen = e.begun[name]
		e.threads[last.channel+"/"+last.thread] = name
		e.recent[name] = last
	}
}

// latest reports whether last is still the automation's latest session,
// for its record in st: no later start here, and in a shared store no
// later start anywhere (Starts is still the one its slot set).
func (e *Engine) latest(name string, last *lastStart, s slot, st *store.AutomationState) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.begun[name] == last.gen && (s.stored == 0 || st.Starts == s.stored)
}

// previousOpen reports whether the automation's previous session (other
// than key's own) is open: this process's last start whose record is on
// its way (recent), and the one whose start the state names, known by
// its thread or, while that is on its way from another process, by its
// occurrence: one still pending is starting, so open.
func (e *Engine) previousOpen(ctx context.Context, name, key string, st store.AutomationState) (bool, error) {
	e.mu.Lock()
	r := e.recent[name]
	e.mu.Unlock()
	if r != nil && r.key != key {
		if open, err := e.sessionOpen(ctx, r.channel, r.thread); err != nil || open {
			return open, err
		}
	}
	if st.LastKey == "" || st.LastKey == key || (r != nil && r.key == st.LastKey) {
		return false, nil
	}
	channel, thread := st.LastChannel, st.LastThread
	if thread == "" {
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
	return e.sessionOpen(ctx, channel, thread)
}

func (e *Engine) sessionOpen(ctx context.Context, channel, thread string) (bool, error) {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	return e.o.Bot.SessionOpen(cctx, channel, thread)
}

// claimSlot makes key the automation's last session in the store, its
// thread to come, if no other start took the slot since st was read; it
// returns the slot's new Starts, 0 when another start took it first.
// Side by side in this process the edits are saved in one batch
// (stateedits.go); across replicas the state's version decides, and the
// loser's edit, applied again to the winner's state, loses.
func (e *Engine) claimSlot(ctx context.Context, name, key string, st store.AutomationState) (int64, error) {
	var taken int64
	_, err := e.editState(ctx, name, func(s *store.AutomationState) {
		taken = 0
		if s.Starts != st.Starts {
			return
		}
		s.Starts++
		s.LastKey, s.LastChannel, s.LastThread = key, "", ""
		taken = s.Starts
	})
	if err != nil {
		return 0, err
	}
	return taken, nil
}

// release gives back the slot of a start whose session did not start:
// the automation's last session is again the one before, unless a later
// start took the slot meanwhile.
func (s slot) release(before store.AutomationState) func(*store.AutomationState) {
	return func(st *store.AutomationState) {
		if s.stored != 0 && st.Starts == s.stored && st.LastThread == "" {
			st.LastKey, st.LastChannel, st.LastThread = before.LastKey, before.LastChannel, before.LastThread
		}
	}
}

package bot

import "github.com/h9-app/h9/bot/render"

// A session whose last checklist edit was still due when its replica died
// is finished by the next holder (ARCHITECTURE.md, "The database going
// away"): a done session's checklist never keeps a live Stop button. A
// save records whether the checklist already shows the record's state
// (Session.EditDue, which keeps the record active); once the edit lands,
// the actor saves again before it retires, and a holder that loads a
// record with the edit due makes it.

// shown is what a checklist message shows of its session's state.
type shown struct {
	state   string
	running bool
	known   bool // false: nothing sent yet by this holder
}

func shownOf(c render.Checklist) shown { return shown{state: c.State, running: c.Running, known: true} }

// shows reports whether the message shows state and running.
func (c *checklist) shows(state string, running bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shown == shown{state: state, running: running, known: true}
}

// assumeShown notes that the message shows what c holds (a record loaded
// with no edit due).
func (c *checklist) assumeShown() {
	c.mu.Lock()
	c.shown = shownOf(c.cur)
	c.mu.Unlock()
}

// noteEditDue sets the record's EditDue before a save.
func (a *actor) noteEditDue() {
	a.rec.EditDue = a.check != nil && a.rec.ChecklistTS != "" && !a.check.shows(a.rec.stateLabel(), a.busy())
}

// finishEdit, as a record is loaded, makes the edit a previous holder did
// not, or notes that none is due.
func (a *actor) finishEdit() {
	if a.rec.EditDue {
		a.log.Info("making the checklist edit a previous holder left due")
		a.refresh()
		return
	}
	a.check.assumeShown()
}

// editSaved reports whether the record says what the checklist shows, so
// that the actor may retire. A record saved with the edit due is saved
// again once the edit has landed; when the checklist still does not show
// the record's state, the edit is made first (the actor then waits for it).
// A holder that is stopping or lost leaves it to the next.
func (a *actor) editSaved() bool {
	if a.rec == nil || !a.loaded || a.lost || !a.rec.EditDue || a.ctx.Err() != nil || !a.holding() {
		return true
	}
	a.save()
	if !a.rec.EditDue || a.lost {
		return true
	}
	a.refresh()
	return false
}

package agent

// A step whose commit has nothing to show commits behind the next model
// request instead of before it: under many sessions a commit waits for the
// shared fdatasyncs, a millisecond or more per step that the run would
// otherwise add to every model call. Durability is unchanged: a step counts
// as stored only once its commit returns, and the run waits for it (settle)
// before anything else happens that depends on it: the next step's tools,
// a compaction, the run's final commit or its end. A crash during the
// commit loses that step either way.

// persistStep commits a finished step. With a todo snapshot to emit it
// commits at once (the checklist shows the list only once stored);
// otherwise the commit runs in the background until settle.
func (r *run) persistStep() error {
	if r.todosPending {
		return r.persist(false)
	}
	if r.saved == len(r.msgs) {
		return nil
	}
	st := r.nextStep() // its msgs[saved:] are only ever appended to
	done := make(chan error, 1)
	go func() { done <- r.e.store.appendStep(r.id, st) }()
	r.inflight, r.inflightTo, r.inflightMode = done, len(r.msgs), st.mode != nil
	return nil
}

// settle waits for the step commit in flight, if any. A failure is kept in
// commitErr for the loop to stop on, as a failed commit always stopped the
// run; the step's messages stay unsaved, so a later commit tries them again.
func (r *run) settle() {
	if r.inflight == nil {
		return
	}
	if err := <-r.inflight; err != nil {
		r.commitErr = err
	} else {
		r.saved = r.inflightTo
		if r.inflightMode {
			r.modeUnsaved = false
		}
	}
	r.inflight = nil
}

package agent

import (
	"context"
	"slices"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// Checkpointer records what a completed todo's work changed in the
// session's workspace — with a repository, a commit on the session branch
// — and returns that checkpoint, or nil when nothing changed. The run calls
// it on its own goroutine, in execution modes, once per todo an accepted
// todo_write moved to completed, before the call's result goes back to the
// model; the checkpoint becomes part of the todo's evidence. An error is
// logged, and the todo stays completed without one.
type Checkpointer func(ctx context.Context, ws *workspace.Workspace, todo planning.TodoItem) (*planning.Checkpoint, error)

// checkpoint asks the run's Checkpointer for each todo res completed.
func (r *run) checkpoint(ctx context.Context, res toolResult) {
	hook := r.opts.Checkpoint
	if hook == nil || r.mode == planning.PlanModePlan || len(res.Completed) == 0 {
		return
	}
	if err := r.env.openWorkspace(); err != nil {
		r.e.log.Warn("checkpoint: opening the workspace", "session", r.id, "err", err)
		return
	}
	for _, id := range res.Completed {
		i := slices.IndexFunc(res.Todos, func(t planning.TodoItem) bool { return t.ID == id })
		if i < 0 || ctx.Err() != nil {
			continue
		}
		cp, err := hook(ctx, r.env.ws, res.Todos[i])
		switch {
		case err != nil:
			r.e.log.Warn("checkpoint failed", "session", r.id, "todo", id, "err", err)
		case cp != nil:
			r.state.Work.Checkpoint(id, *cp)
		}
	}
}

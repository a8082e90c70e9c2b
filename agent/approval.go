package agent

import (
	"context"
	"errors"
	"fmt"
)

// Approver decides on one mutating tool call in auto-edit mode (the bot
// asks the user). An error (e.g. the run was cancelled while waiting) fails
// the call; it does not end the run by itself.
type Approver func(ctx context.Context, req ApprovalRequest) (approved bool, err error)

// ApprovalRequest describes the call awaiting a decision.
type ApprovalRequest struct {
	SessionID string
	Tool      string // write_file, edit_file, bash or an MCP tool (<server>__<tool>)
	Summary   string // the path or the command
	Preview   string // capped diff for file tools, the full command for bash
}

// errRejected is what the model reads when the user says no.
var errRejected = errors.New("the user rejected this call; it was not executed. Ask the user or try a different approach")

// withApproval wraps a mutating tool so that it runs only once approved. A
// call that would fail anyway (bad arguments, path outside the workspace)
// fails without bothering the user.
func withApproval(t *tool, approve Approver) *tool {
	wrapped := *t
	wrapped.Run = func(ctx context.Context, env *toolEnv, args string) toolResult {
		preview, err := t.Preview(env, args)
		if err != nil {
			return fail(err)
		}
		req := ApprovalRequest{SessionID: env.sessionID, Tool: t.Name, Summary: t.Summary(args), Preview: preview}
		approved, err := approve(ctx, req)
		switch {
		case err != nil:
			return fail(fmt.Errorf("could not get the user's approval: %v", err))
		case !approved:
			return fail(errRejected)
		}
		return t.Run(ctx, env, args)
	}
	return &wrapped
}

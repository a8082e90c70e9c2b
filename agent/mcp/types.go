package mcp

import (
	"context"
	"encoding/json"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// Scope is where a run happens, for the manager to narrow what it offers.
type Scope struct {
	SessionID string
	Channel   string // the session's Slack channel; "" when unknown
	Repo      string // the session's repository; "" for none
	Mode      planning.PlanMode
	// Workspace opens the session's workspace, for stdio servers, which
	// run inside its sandbox; the run closes it.
	Workspace func() (*workspace.Workspace, error)
}

// Set is what the manager offers one run; Close (nil: nothing to release)
// is called when the run ends.
type Set struct {
	Tools []Tool
	Close func()
}

// Tool is one server's tool as the model sees it.
type Tool struct {
	Name        string // ^[a-zA-Z0-9_-]{1,64}$, <server>__<tool>
	Description string
	Schema      json.RawMessage // a JSON object schema the model API accepts
	ReadOnly    bool            // annotated readOnlyHint: offered in plan mode, never asks for approval
	Summary     func(args string) string
	Preview     func(args string) string // what a user approving the call reads
	Call        func(ctx context.Context, args string) Result
}

// Result is a call's outcome: a failing server is an error result with
// its words, never an error of the run.
type Result struct {
	Output  string
	IsError bool
	// Images are the bytes of the result's first images (maxResultImages),
	// as the server sent them; Output names every image too, for a model
	// that does not see images.
	Images [][]byte
}

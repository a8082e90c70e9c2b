package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/h9-app/h9/workspace"
)

const bashName = "bash"

type bashParams struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds
}

const bashDescription = "Run a bash command in the workspace directory and return its output and exit code. " +
	"Default timeout 120 seconds, at most 600. Commands do not keep state between calls (no persistent cd or variables)."

var bashSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string",  "description": "The command line to run with bash -c."},
    "timeout": {"type": "integer", "description": "Timeout in seconds (default 120, max 600)."}
  },
  "required": ["command"]
}`)

var bashTool = tool{
	Name:          bashName,
	Description:   bashDescription,
	Schema:        bashSchema,
	Mutating:      true,
	UsesWorkspace: true,
	Summary:       func(args string) string { return summaryOf(args, "command") },
	Run: func(ctx context.Context, env *toolEnv, args string) toolResult {
		var p bashParams
		if err := parseArgs(args, &p, "command"); err != nil {
			return fail(err)
		}
		opts := workspace.BashOptions{Timeout: time.Duration(max(p.Timeout, 0)) * time.Second, ReadOnly: env.readOnly}
		res, err := env.ws.Bash(ctx, p.Command, opts)
		if err != nil {
			return fail(err)
		}
		exit := res.ExitCode
		return toolResult{Output: res.String(), IsError: res.ExitCode != 0 || res.TimedOut || res.Cancelled, Exit: &exit}
	},
	Preview: func(_ *toolEnv, args string) (string, error) {
		var p bashParams
		if err := parseArgs(args, &p, "command"); err != nil {
			return "", err
		}
		return p.Command, nil
	},
}

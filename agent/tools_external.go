package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	openai "github.com/sashabaranov/go-openai"
)

// ToolSource offers tools from outside h9 (MCP servers, agent/mcp) for one
// run. The agent treats them like its own: the same plan-mode filter, the
// same approval in confirm-each-step mode, the same output cap, the same
// work log.
type ToolSource interface {
	// Tools lists the tools offered to one run; it must not block long
	// (a server that is down is left out, not waited for). The returned
	// set's Close is called when the run ends.
	Tools(ctx context.Context, scope ToolScope) ToolSet
}

// ToolScope is where a run happens, for a source to narrow what it offers.
type ToolScope struct {
	SessionID string
	Channel   string // the session's Slack channel; "" when unknown
	Repo      string // the session's repository; "" for none
	Mode      planning.PlanMode
	// Workspace opens (creating it) the session's workspace, for tools
	// that run inside its sandbox; the run closes it.
	Workspace func() (*workspace.Workspace, error)
}

// ToolSet is what a source offers one run.
type ToolSet struct {
	Tools []ExternalTool
	Close func() // nil: nothing to release
}

// ExternalTool is one tool of a source.
type ExternalTool struct {
	Name        string // ^[a-zA-Z0-9_-]{1,64}$, not a built-in tool's name
	Description string
	Schema      json.RawMessage // a JSON object schema the model API accepts
	ReadOnly    bool            // offered in plan mode, and never asks for approval
	// Summary is the call's short text for status lines and evidence.
	Summary func(args string) string
	// Preview is what a user approving the call reads.
	Preview func(args string) string
	Call    func(ctx context.Context, args string) ExternalResult
}

// ExternalResult is a call's outcome; a failing server is an error result
// with its words, never an error of the run.
type ExternalResult struct {
	Output  string
	IsError bool
}

// externalTools turns a source's tools into the agent's own, leaving out any
// that would shadow a built-in (a source must not, but the check is cheap).
func externalTools(set ToolSet) []*tool {
	out := make([]*tool, 0, len(set.Tools))
	for _, x := range set.Tools {
		if isBuiltin(x.Name) || x.Call == nil {
			continue
		}
		out = append(out, externalTool(x))
	}
	return out
}

func externalTool(x ExternalTool) *tool {
	summary := x.Summary
	if summary == nil {
		summary = func(string) string { return "" }
	}
	return &tool{
		Name: x.Name, Description: x.Description, Schema: x.Schema,
		Mutating: !x.ReadOnly, PlanSafe: x.ReadOnly, Summary: summary,
		Run: func(ctx context.Context, _ *toolEnv, args string) toolResult {
			res := x.Call(ctx, args)
			if res.IsError {
				return toolResult{Output: "Error: " + res.Output, IsError: true}
			}
			return ok(res.Output)
		},
		Preview: func(_ *toolEnv, args string) (string, error) {
			if x.Preview != nil {
				return x.Preview(args), nil
			}
			return previewArgs(x.Name, args), nil
		},
	}
}

// previewArgs is the default approval text of an external call: the tool
// and its arguments, indented.
func previewArgs(name, args string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(args), "", "  ") != nil {
		return fmt.Sprintf("%s %s", name, args)
	}
	return name + " " + buf.String()
}

func isBuiltin(name string) bool {
	return slices.ContainsFunc(registry, func(t *tool) bool { return t.Name == name })
}

// withExternal adds the external tools allowed in the toolset's mode to
// its calls and its definitions (after the built-in ones, which stay the
// shared, pre-encoded list when there are none).
func (ts *toolset) withExternal(ext []*tool, approve Approver) {
	var defs []openai.Tool
	for _, t := range ext {
		if !toolInMode(t, ts.mode) {
			continue
		}
		if ts.mode == planning.PlanModeAutoEdit && t.Mutating && approve != nil {
			t = withApproval(t, approve)
		}
		ts.byName[t.Name] = t
		defs = append(defs, definition(t))
	}
	if len(defs) > 0 {
		ts.defs = append(slices.Clip(ts.defs), defs...)
	}
}

// addExternalTools asks Config.Tools for the run's external tools.
func (r *run) addExternalTools(ctx context.Context, approve Approver) {
	src := r.e.cfg.Tools
	if src == nil {
		return
	}
	set := src.Tools(ctx, ToolScope{
		SessionID: r.id, Channel: r.opts.Channel, Repo: r.opts.Repo, Mode: r.mode,
		Workspace: func() (*workspace.Workspace, error) {
			if err := r.env.openWorkspace(); err != nil {
				return nil, err
			}
			return r.env.ws, nil
		},
	})
	r.closeTools = set.Close
	r.tools.withExternal(externalTools(set), approve)
}

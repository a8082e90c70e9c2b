package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// ToolSource offers tools from outside h9 (MCP servers: *mcp.Manager)
// for one run. The agent treats them like its own: the same plan-mode
// filter, the same approval in confirm-each-step mode, the same output
// cap, the same work log. Tools must not block long (a server that is
// down is left out, not waited for); the set's Close is called when the
// run ends.
type ToolSource interface {
	Tools(ctx context.Context, scope mcp.Scope) mcp.Set
	// EndSession releases what the source holds for the session (its
	// stdio servers' processes) now: the session was cancelled.
	EndSession(sessionID string)
}

// externalTools turns a source's tools into the agent's own, leaving out any
// that would shadow a built-in (a source must not, but the check is cheap).
func externalTools(set mcp.Set) []*tool {
	out := make([]*tool, 0, len(set.Tools))
	for _, x := range set.Tools {
		if isBuiltin(x.Name) || x.Call == nil {
			continue
		}
		out = append(out, externalTool(x))
	}
	return out
}

func externalTool(x mcp.Tool) *tool {
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
			return toolResult{Output: res.Output, Images: res.Images}
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
	set := src.Tools(ctx, mcp.Scope{
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

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDescription bounds a tool's description in every request.
const maxDescription = 1024

// offer is one of a server's tools as the model sees it.
type offer struct {
	name     string // <server>__<tool>, within the model API's rules
	tool     string // the server's own name for it
	desc     string
	schema   json.RawMessage
	readOnly bool
}

// buildOffers turns a server's tool list into what h9 offers: the allow
// list applied, names made, schemas checked (a tool whose schema the model
// API would refuse is left out, with a log line saying why).
func (s *server) buildOffers(tools []*mcp.Tool) []offer {
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, t := range tools {
		if t == nil || (len(s.cfg.Tools) > 0 && !slices.Contains(s.cfg.Tools, t.Name)) {
			continue
		}
		if _, dup := byName[t.Name]; dup {
			continue
		}
		byName[t.Name] = t
		names = append(names, t.Name)
	}
	exposed := exposedNames(s.cfg.Name, names)
	out := make([]offer, 0, len(names))
	for _, n := range names {
		t := byName[n]
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			s.m.log.Warn("MCP tool left out", "server", s.cfg.Name, "tool", s.m.scrub.String(short(n, 80)), "reason", err.Error())
			continue
		}
		desc := fmt.Sprintf("[MCP server %s] %s", s.cfg.Name, s.m.scrub.String(t.Description))
		out = append(out, offer{
			name: exposed[n], tool: n, desc: short(desc, maxDescription), schema: schema,
			readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
		})
	}
	slices.SortFunc(out, func(a, b offer) int { return strings.Compare(a.name, b.name) })
	return out
}

// tool is one offer for one run, its calls going through call.
func (s *server) tool(o offer, call caller) Tool {
	return Tool{
		Name: o.name, Description: o.desc, Schema: o.schema, ReadOnly: o.readOnly,
		Summary: argsSummary,
		Preview: func(args string) string { return s.preview(o, args) },
		Call: func(ctx context.Context, args string) Result {
			return s.callOnce(ctx, o, call, args)
		},
	}
}

// preview is what a user approving the call reads.
func (s *server) preview(o offer, args string) string {
	where := "a stdio server in this session's sandbox"
	if s.cfg.Remote() {
		where = s.cfg.URL
	}
	var buf strings.Builder
	fmt.Fprintf(&buf, "MCP tool %s of server %s (%s)\n", o.tool, s.cfg.Name, where)
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		pretty, _ := json.MarshalIndent(v, "", "  ")
		buf.Write(pretty)
	} else {
		buf.WriteString(args)
	}
	return buf.String()
}

// callOnce is one call with its deadline; whatever the server does, the
// model gets a result (an error result for a failure, in the server's
// words), the metric counts it and no header value is in it.
func (s *server) callOnce(ctx context.Context, o offer, call caller, args string) Result {
	var params map[string]any
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), &params); err != nil || params == nil {
		return Result{Output: "the arguments are not a JSON object; send them again as one", IsError: true}
	}
	timeout := s.m.opts.CallTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := call(cctx, o.tool, params)
	outcome, out := "ok", Result{}
	switch {
	case err != nil && ctx.Err() != nil:
		outcome, out = "failed", Result{Output: "cancelled before MCP server " + s.cfg.Name + " answered", IsError: true}
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		outcome = "timeout"
		out = Result{Output: fmt.Sprintf("MCP server %s did not answer within %s", s.cfg.Name, timeout), IsError: true}
	case err != nil:
		outcome = "failed"
		out = Result{Output: fmt.Sprintf("MCP server %s failed: %s", s.cfg.Name, short(oneLine(err.Error()), 2000)), IsError: true}
	case res.IsError:
		outcome, out = "tool_error", Result{IsError: true}
		out.Output, _ = resultText(res)
	default:
		out.Output, out.Images = resultText(res)
	}
	s.m.opts.Metrics.MCPCall(s.cfg.Kind(), outcome)
	out.Output = s.m.scrub.String(out.Output)
	return out
}

// argsSummary is a call's arguments in a few words, for status lines and
// the ✔ line's evidence: the values of its string arguments, or its JSON.
func argsSummary(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return short(oneLine(args), 80)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var words []string
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			words = append(words, oneLine(v))
		}
	}
	if len(words) == 0 {
		return short(oneLine(args), 80) // the approval message shows something
	}
	return short(strings.Join(words, " "), 80)
}

// short cuts s to n bytes at a rune boundary, marking the cut.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "…"
}

// maxListed caps a server's tool list: a server that pages forever is cut.
const maxListed = 1000

// listTools is a server's tool list, page after page, within listTimeout.
func listTools(ctx context.Context, sess *mcp.ClientSession) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
		if len(tools) > maxListed {
			break
		}
	}
	return tools, nil
}

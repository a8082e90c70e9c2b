package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// mcpDoctorWait is how long doctor waits for each server: a remote one to
// connect, a stdio one to start, answer and list its tools.
const mcpDoctorWait = 10 * time.Second

// checkMCP lists each server with its tool count, or why not: a remote
// one connected to, a stdio one started once in a throwaway sandboxed
// workspace. A server that is down is a warning: h9 starts anyway.
func checkMCP(ctx context.Context, cfg Config) finding {
	if len(cfg.mcp) == 0 {
		return ok("none configured (H9_MCP_FILE)")
	}
	open, cleanup := mcpProbeWorkspaces(cfg)
	defer cleanup() // after Close: Check has stopped every server it started
	m := cfg.newMCP(slog.New(slog.DiscardHandler), nil)
	defer m.Close()
	statuses := m.Check(ctx, mcpDoctorWait, open)
	f := ok("%d configured", len(statuses))
	var down []string
	for _, s := range statuses {
		mark := "✓"
		if !s.OK {
			mark = "✗"
			down = append(down, s.Name)
		}
		f.more = append(f.more, fmt.Sprintf("%s %s (%s): %s", mark, s.Name, s.Kind, m.Scrub(s.Line)))
	}
	if len(down) > 0 {
		f.verdict = verdictWarn
		f.detail = fmt.Sprintf("%d configured, not answering: %s", len(statuses), strings.Join(down, ", "))
		f.hint = "their tools are offered once they answer"
	}
	return f
}

package mcp

import (
	"context"
	"fmt"
	"time"
)

// Status is one server as `h9 doctor` reports it.
type Status struct {
	Name, Kind string
	OK         bool
	Line       string // "connected, 3 tools" or why not
}

// Check connects to every remote server (waiting up to wait for each) and
// reports them in the file's order. A stdio server is started only in a
// session's sandbox, so it is reported as configured.
func (m *Manager) Check(ctx context.Context, wait time.Duration) []Status {
	var out []Status
	for _, s := range m.servers {
		st := Status{Name: s.cfg.Name, Kind: s.cfg.Kind()}
		if s.stdio != nil {
			st.OK = true
			st.Line = fmt.Sprintf("stdio server %q, started in each session's sandbox on first use and stopped once the session is idle for %s",
				s.cfg.Command, m.opts.StdioIdle)
			if n, listed, running := s.stdio.state(); listed {
				st.Line += fmt.Sprintf(", %d %s, running for %d %s", n, plural(n, "tool", "tools"), running, plural(running, "session", "sessions"))
			}
			out = append(out, st)
			continue
		}
		if done := s.remote.kick(); done != nil {
			select {
			case <-done:
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		connected, n, err := s.remote.state()
		switch {
		case connected:
			st.OK, st.Line = true, fmt.Sprintf("connected to %s, %d %s", s.cfg.URL, n, plural(n, "tool", "tools"))
		case err != nil:
			st.Line = fmt.Sprintf("%s: not connected: %v (h9 starts anyway and offers its tools once it answers)", s.cfg.URL, err)
		default:
			st.Line = fmt.Sprintf("%s: no answer within %s (h9 starts anyway and offers its tools once it answers)", s.cfg.URL, wait)
		}
		out = append(out, st)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

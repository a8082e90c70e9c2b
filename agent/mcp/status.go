package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/h9-app/h9/workspace"
)

// Status is one server as `h9 doctor` reports it.
type Status struct {
	Name, Kind string
	OK         bool
	Line       string // "connected, 3 tools" or why not
}

// Check reports every server in the file's order, checking them side by
// side, each within wait: a remote server is connected to; a stdio server
// is started once in a throwaway workspace from open, as a session would
// start it, listed and stopped (open nil: it is reported as configured,
// with what the live manager knows of it). Check returns once every
// process it started is gone.
func (m *Manager) Check(ctx context.Context, wait time.Duration, open func() (*workspace.Workspace, error)) []Status {
	out := make([]Status, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() {
			out[i] = Status{Name: s.cfg.Name, Kind: s.cfg.Kind()}
			if s.stdio != nil {
				out[i].OK, out[i].Line = s.stdio.status(ctx, wait, open)
			} else {
				out[i].OK, out[i].Line = s.remote.status(ctx, wait)
			}
		})
	}
	wg.Wait()
	return out
}

func (r *remote) status(ctx context.Context, wait time.Duration) (bool, string) {
	if done := r.kick(); done != nil {
		select {
		case <-done:
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	url := r.s.cfg.URL
	connected, n, err := r.state()
	switch {
	case connected:
		return true, fmt.Sprintf("connected to %s, %d %s", url, n, plural(n, "tool", "tools"))
	case err != nil:
		return false, fmt.Sprintf("%s: not connected: %v (h9 starts anyway and offers its tools once it answers)", url, err)
	default:
		return false, fmt.Sprintf("%s: no answer within %s (h9 starts anyway and offers its tools once it answers)", url, wait)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

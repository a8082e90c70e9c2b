package mcp

import (
	"time"
)

// DefaultStdioIdle is how long a session's stdio server outlives the
// session's last run. A thread's next run — the user's reply to an
// answer, a follow-up — mostly comes within minutes, and a kept process
// spares it the server's start (tens of milliseconds in the sandbox, whole
// seconds for an npx or uvx server) and keeps what the server has in
// memory; a session quiet for longer is likely done, and its server
// would only hold memory in its cgroup.
const DefaultStdioIdle = 5 * time.Minute

// The lifetime of a session's stdio process (ARCHITECTURE.md, "MCP
// tools"): started by the first call or listing of a run; kept while runs
// of the session use it and for Options.StdioIdle after the last one
// ended; stopped at once when a run ends cancelled (the user's cancel, a
// shutdown), as the session's commands are, or when the session is
// cancelled between runs (EndSession); stopped by Close with every
// other, which h9's run defers; and ended by the kernel if h9 dies
// (bwrap's --die-with-parent, the launcher's control pipe). The reaper
// goroutine that stops idle ones is the Manager's, and Close waits for it.

// begin counts a run of the session as using the server.
func (st *stdio) begin(id string) {
	st.mu.Lock()
	st.session(id).runs++
	st.mu.Unlock()
}

// end is a run's end: the idle clock starts, or, for a cancelled run, the
// process stops now.
func (st *stdio) end(id string, cancelled bool) {
	st.mu.Lock()
	s := st.session(id)
	s.runs--
	s.last = time.Now()
	c := s.conn
	stopNow := cancelled && s.runs == 0 && c != nil
	if stopNow {
		s.conn = nil
	}
	st.mu.Unlock()
	if stopNow {
		c.stop()
	}
}

// stopIdle stops the processes of sessions that no run used for idle, and
// forgets sessions with neither a run nor a process.
func (st *stdio) stopIdle(now time.Time, idle time.Duration) {
	st.forget(func(s *stdioSession) bool { return s.runs == 0 && now.Sub(s.last) >= idle })
}

// EndSession implements agent.ToolSource: the session was cancelled (the
// Cancel button, which may come between runs), so its stdio processes stop
// now rather than once it is idle. A run of it still going is being
// cancelled too; its calls fail.
func (m *Manager) EndSession(sessionID string) {
	for _, s := range m.servers {
		if s.stdio != nil {
			s.stdio.endSession(sessionID)
		}
	}
}

func (st *stdio) endSession(id string) {
	st.mu.Lock()
	s := st.sessions[id]
	var c *stdioConn
	if s != nil {
		c, s.conn = s.conn, nil
	}
	st.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// closeAll stops every session's process (h9 stops).
func (st *stdio) closeAll() {
	st.forget(func(*stdioSession) bool { return true })
}

// forget drops the sessions gone says are, and stops their processes
// outside the lock (a stop waits for the process).
func (st *stdio) forget(gone func(*stdioSession) bool) {
	var stop []*stdioConn
	st.mu.Lock()
	for id, s := range st.sessions {
		if !gone(s) {
			continue
		}
		if s.conn != nil {
			stop = append(stop, s.conn)
		}
		delete(st.sessions, id)
	}
	st.mu.Unlock()
	for _, c := range stop {
		c.stop()
	}
}

// reapIdle runs until Close, stopping idle stdio processes a few times per
// idle period (so one lives at most a quarter longer than idle).
func (m *Manager) reapIdle() {
	defer m.wg.Done()
	t := time.NewTicker(max(m.opts.StdioIdle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case now := <-t.C:
			for _, s := range m.servers {
				if s.stdio != nil {
					s.stdio.stopIdle(now, m.opts.StdioIdle)
				}
			}
		}
	}
}

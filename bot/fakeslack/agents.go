package fakeslack

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// Slack's agent sessions: a thread's status ("processing" shows the native
// Stop button), its title and who started it (agents.sessions.setStatus,
// agents.sessions.rename), and the agent_session_stopped event a click on
// Stop sends. Guarded by Server.mu.

// The session statuses agents.sessions.setStatus and chat.stopStream's
// session_status accept.
const (
	StatusActive     = "active"
	StatusProcessing = "processing"
	StatusSuspended  = "suspended"
	StatusClosed     = "closed"
)

// maxSessionTitle is the longest title Slack takes (characters).
const maxSessionTitle = 200

func validStatus(s string) bool {
	return s == StatusActive || s == StatusProcessing || s == StatusSuspended || s == StatusClosed
}

// StatusChange is one time Slack set a session's status.
type StatusChange struct {
	Status string
	// Method is agents.sessions.setStatus, or chat.stopStream for its
	// session_status (or Slack's default, active).
	Method string
	// Replica is the tag of the API URL the call came through (APIURLFor);
	// "" for APIURL.
	Replica string
	At      time.Time
}

// AgentSession is a thread's agent session as Slack holds it.
type AgentSession struct {
	Channel, ThreadTS string
	Title             string // set when created; agents.sessions.rename changes it
	Initiator         string // initiator_user_id when created
	Status            string // the latest
	// History holds every time the status was set, equal or not to the one before.
	History []StatusChange
	Renames int
}

func (a AgentSession) clone() AgentSession {
	a.History = slices.Clone(a.History)
	return a
}

// agentSessions holds the sessions by channel/root ts.
type agentSessions map[string]*AgentSession

func (s *Server) agentSessionLocked(channel, root string) *AgentSession {
	return s.agents[key(channel, root)]
}

// set records a status change.
func (a *AgentSession) set(status, method, replica string) {
	a.Status = status
	a.History = append(a.History, StatusChange{Status: status, Method: method, Replica: replica, At: time.Now()})
}

// sessionThreadLocked checks the channel_id and thread_ts of an agents.sessions.* call and
// resolves the thread (a reply's ts means its thread), or returns Slack's error code.
func (s *Server) sessionThreadLocked(r *apiRequest) (channel, root, code string) {
	channel, thread := r.get("channel_id"), r.get("thread_ts")
	switch {
	case thread == "":
		return "", "", "thread_ts_required"
	case !validChannel(channel):
		return "", "", "channel_not_found"
	}
	return channel, s.threadOfLocked(channel, thread), ""
}

func (s *Server) agentsSetStatus(r *apiRequest) reply {
	status := r.get("status")
	if !validStatus(status) {
		return fail("invalid_status")
	}
	channel, root, code := s.sessionThreadLocked(r)
	if code != "" {
		return fail(code)
	}
	a := s.agentSessionLocked(channel, root)
	if a == nil {
		title, initiator := r.get("title"), r.get("initiator_user_id")
		if n := utf8.RuneCountInString(title); n > maxSessionTitle {
			return s.refuseLocked("agents.sessions.setStatus "+channel, "invalid_arguments",
				[]string{fmt.Sprintf("title is %d characters (max %d)", n, maxSessionTitle)})
		}
		if initiator != "" && !validUser(initiator) {
			return fail("user_not_found")
		}
		a = &AgentSession{Channel: channel, ThreadTS: root, Title: title, Initiator: initiator}
		s.agents[key(channel, root)] = a
	}
	a.set(status, r.method, r.replica)
	out := map[string]any{"status": a.Status, "agent_status": a.Status}
	if a.Title != "" {
		out["title"] = a.Title
	}
	return ok(out)
}

func (s *Server) agentsRename(r *apiRequest) reply {
	title := r.get("title")
	if n := utf8.RuneCountInString(title); n == 0 || n > maxSessionTitle {
		return s.refuseLocked("agents.sessions.rename", "invalid_arguments",
			[]string{fmt.Sprintf("title is %d characters (need 1..%d)", n, maxSessionTitle)})
	}
	channel, root, code := s.sessionThreadLocked(r)
	if code != "" {
		return fail(code)
	}
	a := s.agentSessionLocked(channel, root)
	if a == nil {
		return fail("session_not_found")
	}
	a.Title = title
	a.Renames++
	return ok(map[string]any{"title": a.Title})
}

// AgentSession returns the agent session of a thread (threadTS its root or a reply).
func (s *Server) AgentSession(channel, threadTS string) (AgentSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agentSessionLocked(channel, s.threadOfLocked(channel, threadTS))
	if a == nil {
		return AgentSession{}, false
	}
	return a.clone(), true
}

// StatusSequence is what a user watching the thread saw: the session's
// statuses in order, each change once (setting the status it already had
// shows nothing new). Nil when the thread has no session.
func (s *Server) StatusSequence(channel, threadTS string) []string {
	a, found := s.AgentSession(channel, threadTS)
	if !found {
		return nil
	}
	var out []string
	for _, c := range a.History {
		if len(out) == 0 || out[len(out)-1] != c.Status {
			out = append(out, c.Status)
		}
	}
	return out
}

// PressStop is a user clicking the Stop button Slack draws on a thread's
// agent session while it is processing. As Slack does, it halts the app's
// open streams in the thread (listed in streaming_message_ts), leaves the
// status alone (the app must move it) and delivers agent_session_stopped
// from user, waiting for the ack. ErrNoStopButton when the thread's session
// is not processing: Slack shows no button then.
func (s *Server) PressStop(ctx context.Context, user, channel, threadTS string) (Ack, error) {
	s.mu.Lock()
	root := s.threadOfLocked(channel, threadTS)
	a := s.agentSessionLocked(channel, root)
	if a == nil || a.Status != StatusProcessing {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %s/%s", ErrNoStopButton, channel, root)
	}
	halted := []string{}
	for _, m := range s.store.thread(channel, root) {
		if m.Streaming {
			m.Streaming = false
			m.StreamHaltedBy = user
			halted = append(halted, m.TS)
		}
	}
	ev := map[string]any{"type": "agent_session_stopped", "channel": channel, "thread_ts": root, "user": user,
		"streaming_message_ts": halted, "event_ts": s.newTSLocked()}
	e := s.eventEnvelopeLocked("", ev)
	s.mu.Unlock()
	return s.deliver(ctx, e)
}

package bot

import (
	"strings"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// Session is the persisted record of one Slack thread. Everything a button
// or a restart needs lives here, so no behaviour depends on process memory.
type Session struct {
	ID       string `json:"id"` // "team/channel/threadTS": store key, agent session id, button value
	Team     string `json:"team"`
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	Task     string `json:"task"`
	Owner    string `json:"owner"`

	State   render.State      `json:"state"`
	Mode    planning.PlanMode `json:"mode"`
	Running bool              `json:"running"` // a run was in flight (resumed after a restart)

	// The seed's auto-run loop.
	AutoRun  bool `json:"auto_run"`
	Stuck    int  `json:"stuck"`
	PrevDone int  `json:"prev_done"`

	ChecklistTS string `json:"checklist_ts"`
	ReviewTS    string `json:"review_ts"`
	Revision    int    `json:"revision"` // plan revision; a review button must carry the current one

	Approval *PendingApproval `json:"approval,omitempty"`
	StepSeq  int              `json:"step_seq"`

	Queue      []QueuedReply     `json:"queue,omitempty"` // replies that arrived during a run, in order
	LastPrompt string            `json:"last_prompt"`     // what Retry dispatches again
	Progress   planning.Progress `json:"progress"`        // for /h9 status without asking the agent

	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// PendingApproval is a step waiting for Approve/Reject in confirm-each-step mode.
type PendingApproval struct {
	StepID  string `json:"step_id"`
	TS      string `json:"ts"`
	Tool    string `json:"tool"`
	Summary string `json:"summary"`
}

// QueuedReply is a thread reply held until the session's run ends.
type QueuedReply struct {
	User string `json:"user"`
	Text string `json:"text"`
	TS   string `json:"ts"`
}

// sessionID builds the id of the session living in a thread. It doubles as
// the bbolt key: team/channel/ prefixes make one channel a cheap range scan.
func sessionID(team, channel, threadTS string) string {
	return team + "/" + channel + "/" + threadTS
}

// channelPrefix is the key prefix of every session in a channel.
func channelPrefix(team, channel string) string { return team + "/" + channel + "/" }

// active reports whether a restart must act on the session.
func (s *Session) active() bool { return s.Running || s.Approval != nil }

// retryPrompt is what running the session's last prompt again sends.
func (s *Session) retryPrompt() string {
	if s.LastPrompt != "" {
		return s.LastPrompt
	}
	return s.Task
}

// byRecent orders sessions most recently updated first (then newest thread).
func byRecent(x, y *Session) int {
	if c := y.Updated.Compare(x.Updated); c != 0 {
		return c
	}
	return strings.Compare(y.ThreadTS, x.ThreadTS)
}

// cleanTask normalises a task or reply text from Slack.
func cleanTask(s string) string { return strings.TrimSpace(s) }

// splitSessionID is the inverse of sessionID.
func splitSessionID(id string) (team, channel, thread string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

package bot

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/planning"
)

// Session is the persisted record of one Slack thread. Everything a button
// or a restart needs lives here, so no behaviour depends on process memory.
// Only the transition function (machine.go) changes it.
type Session struct {
	// Identity: the store's metadata, kept outside the encoded data.
	ID       string    `json:"-"` // newSessionID: store key, agent session id, button value
	Team     string    `json:"-"`
	Channel  string    `json:"-"`
	ThreadTS string    `json:"-"`
	Owner    string    `json:"-"`
	Updated  time.Time `json:"-"`

	Task    string    `json:"task"`
	Created time.Time `json:"created"`

	State state             `json:"state"`
	Mode  planning.PlanMode `json:"mode"` // the mode of the session's runs: the bot's to choose
	// Request is what the latest run was asked: Retry and a restart ask it again.
	Request   agent.Request `json:"request"`
	StoppedBy string        `json:"stopped_by,omitempty"` // Stop was pressed; the run is ending
	// AgentStatus is the agent session status last told to Slack (surfaces.go).
	AgentStatus string `json:"agent_status,omitempty"`
	// StreamTS is the run's streamed message (stream.go): open while the
	// run is in flight, then the one its words' post edits.
	StreamTS string `json:"stream_ts,omitempty"`

	// The Planning module's auto-run loop.
	AutoRun  bool `json:"auto_run"`
	Stuck    int  `json:"stuck"`
	PrevDone int  `json:"prev_done"`

	ChecklistTS string `json:"checklist_ts"`
	ReviewTS    string `json:"review_ts"`
	Revision    int    `json:"revision"` // plan revision; a review button must carry the current one

	// EditDue: when this record was saved the checklist did not yet show
	// its state (an edit coalescing, or cut short): the next holder makes
	// the edit (edit_due.go).
	EditDue bool `json:"edit_due,omitempty"`

	Approval *PendingApproval `json:"approval,omitempty"`
	StepSeq  int              `json:"step_seq"`

	Repo *SessionRepo `json:"repo,omitempty"` // the session's repository; nil: an empty workspace
	// Network is what the thread was told and decided about refused hosts
	// (network_asks.go); nil: nothing yet.
	Network *SessionNetwork `json:"network,omitempty"`

	Queue []QueuedReply `json:"queue,omitempty"` // replies that arrived during a run, in order
	// Files are the files shared with Request, downloaded when its run
	// starts (attachfetch.go).
	Files    []agent.Attachment `json:"files,omitempty"`
	Progress planning.Progress  `json:"progress"` // for /h9 status without asking the agent

	// Posts are thread messages decided and not yet known posted (posts.go).
	Posts   []PendingPost `json:"posts,omitempty"`
	PostSeq int           `json:"post_seq,omitempty"`
	// Outcome is a session done with a repository whose outcome (changes,
	// buttons, diff) is not yet decided: the next holder makes it.
	Outcome *RepoOutcome `json:"outcome,omitempty"`
	// Tokens is the session's total as the agent last reported it (a run's
	// end), for /h9 status, the Home tab and the budget without asking the
	// agent, like Progress; the agent's state is the source.
	Tokens agent.Usage `json:"tokens"`
	// BudgetRaises counts Raise budget presses: each adds the configured
	// budget once more. BudgetTS is the budget message with the button.
	BudgetRaises int `json:"budget_raises,omitempty"`
	// Budget replaces the configured budget for this session (an
	// automation's budget:); 0 = the configured one.
	Budget   int    `json:"budget,omitempty"`
	BudgetTS string `json:"budget_ts,omitempty"`

	// Follow is the request h9 opened and follows (bot/follow); nil: none.
	Follow *follow.Follow `json:"follow,omitempty"`

	// rules is the operator's token settings, set by the actor when it
	// loads or makes the session; not stored.
	rules tokenRules
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
	// Files were checked when the reply arrived; its run downloads them.
	Files []agent.Attachment `json:"files,omitempty"`
}

// active reports whether a restart must act on the session: a run in
// flight, a post it may not have made, or a checklist edit.
// A followed request is active too: a restart must go on following it.
func (s *Session) active() bool {
	return s.State.inFlight() || len(s.Posts) > 0 || s.Outcome != nil || s.EditDue || s.Follow.Following()
}

// clone copies s deeply enough that changing the copy leaves s as it was.
func (s Session) clone() Session {
	s.Queue = slices.Clone(s.Queue)
	s.Posts = slices.Clone(s.Posts)
	s.Files = slices.Clone(s.Files)
	s.Network = s.Network.clone()
	if s.Approval != nil {
		a := *s.Approval
		s.Approval = &a
	}
	if s.Repo != nil {
		r := *s.Repo
		s.Repo = &r
	}
	s.Follow = s.Follow.Clone()
	return s
}

// record encodes s for the store.
func (s *Session) record() (store.SessionRecord, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return store.SessionRecord{}, fmt.Errorf("%w: encoding session %s: %w", ErrStore, s.ID, err)
	}
	return store.SessionRecord{Data: data, Meta: store.SessionMeta{
		ID: s.ID, Team: s.Team, Channel: s.Channel, Thread: s.ThreadTS, Owner: s.Owner,
		Active: s.active(), Updated: s.Updated,
	}}, nil
}

// decodeSession reads a stored record, this version's or an earlier one's.
func decodeSession(rec store.SessionRecord) (*Session, error) {
	s := new(Session)
	if err := json.Unmarshal(rec.Data, s); err != nil {
		return nil, fmt.Errorf("%w: decoding session %s: %w", ErrStore, rec.Meta.ID, err)
	}
	if !s.State.known() {
		return nil, fmt.Errorf("%w: session %s is in state %q, which this h9 does not know (a newer h9 wrote it); it is left alone", ErrUnknownState, rec.Meta.ID, s.State)
	}
	m := rec.Meta
	s.ID, s.Team, s.Channel, s.ThreadTS, s.Owner, s.Updated = m.ID, m.Team, m.Channel, m.Thread, m.Owner, m.Updated
	if s.Request.Intent == 0 {
		s.Request = s.earlierRequest()
	}
	return s, nil
}

// earlierRequest stands in for the request of a record stored before
// requests were (they kept a prompt text instead): an approved plan goes
// on, anything else starts on the task again.
func (s *Session) earlierRequest() agent.Request {
	if s.Mode != planning.PlanModePlan && s.Progress.Total > 0 {
		return agent.Request{Intent: agent.IntentContinue}
	}
	return agent.Request{Intent: agent.IntentTask, Text: s.Task}
}

// byRecent orders sessions most recently updated first (then newest thread).
func byRecent(x, y *Session) int {
	return cmp.Or(y.Updated.Compare(x.Updated), strings.Compare(y.ThreadTS, x.ThreadTS))
}

// cleanTask normalises a task or reply text from Slack.
func cleanTask(s string) string { return strings.TrimSpace(s) }

// newSessionID makes the id of a session started in a thread:
// "team/channel/threadTS". It is the session's key for the store, the
// agent and its workspace, and the value its buttons carry. Once made it
// is opaque: the bot finds a thread's session by channel and thread, so a
// session made while auth.test could not tell the team is still reached
// after a start that can (and the other way round).
func newSessionID(team, channel, threadTS string) string {
	return team + "/" + channel + "/" + threadTS
}

// ParseSessionID splits an id newSessionID made. This file is the one
// owner of the format: cmd/h9 uses it to tag the agent's log lines, which
// carry only the id, with their channel and thread.
func ParseSessionID(id string) (team, channel, thread string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// threadKey names the thread a session lives in: what the bot routes by.
type threadKey struct{ channel, ts string }

// String names the thread: "channel/ts".
func (k threadKey) String() string { return k.channel + "/" + k.ts }

// threadOf is the thread of a session id, for a button's value.
func threadOf(id string) (threadKey, bool) {
	_, channel, thread, ok := ParseSessionID(id)
	return threadKey{channel: channel, ts: thread}, ok
}

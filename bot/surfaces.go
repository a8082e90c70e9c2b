package bot

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
)

// Each session thread is a Slack agent session (ARCHITECTURE.md, "Slack's
// agent surfaces"): after a transition the actor derives the status the
// session is in and tells Slack when it changed, once per change; the
// status last told is in the record, so a restart or the next holder does
// not tell it again. Slack's own Stop button arrives as
// agent_session_stopped and does what h9's Stop does, for the same people.
// Where Slack refuses the surface, nothing here is sent (slackapi turns it
// off for the process) and the thread looks as it always did.

// actionNativeStop is the action of a press on the Stop button Slack
// draws; it is never rendered, so onInteraction never takes it.
const actionNativeStop = "agent_session_stopped"

// maxSessionTitle is the longest session title Slack takes (characters).
const maxSessionTitle = 200

// agentStatus is the status Slack shows for the session as the record
// has it: processing while a run is in flight (auto-run's runs included),
// suspended while it waits on a person, closed once it ended for good,
// active when it rests.
func (s *Session) agentStatus() string {
	switch {
	case s.State.inFlight() && s.State != stateAwaitingApproval:
		return slack.AgentSessionStatusProcessing
	case s.State == stateCancelled, s.Follow != nil && s.Follow.Ended != "":
		return slack.AgentSessionStatusClosed
	case s.waitsOnPerson():
		return slack.AgentSessionStatusSuspended
	}
	return slack.AgentSessionStatusActive
}

// waitsOnPerson: the session rests until someone presses a button: the
// plan's review, a step to confirm, Resume after a restart, Raise budget,
// Allow host, Address feedback.
func (s *Session) waitsOnPerson() bool {
	switch s.State {
	case stateAwaitingReview, stateAwaitingApproval, stateInterrupted, stateOverBudget:
		return true
	}
	if s.Network != nil && len(s.Network.Asks) > 0 {
		return true
	}
	f := s.Follow
	return f.Following() && f.Batch != nil && f.Batch.Status == follow.Waiting
}

// sessionTitle is the task as the session's title: the operator's words
// without an automation's fenced data (automation.TaskOf, as the pull
// request's title), on one line, cut at a word boundary to at most
// maxSessionTitle characters.
func sessionTitle(task string) string {
	t := strings.Join(strings.Fields(automation.TaskOf(task)), " ")
	if utf8.RuneCountInString(t) <= maxSessionTitle {
		return t
	}
	cut := string([]rune(t)[:maxSessionTitle-1]) // room for the ellipsis
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return cut + "…"
}

// syncAgentStatus tells Slack the session's status when it differs from
// the one last told, under the session's lease (a.ctx), and records it. A
// failed call is tried again after the next transition; a refused one
// turns the surface off and is not.
func (a *actor) syncAgentStatus() {
	s := a.rec
	if s == nil || a.lost || !a.b.api.SurfaceOn(slackapi.SurfaceStatus) {
		return
	}
	want := s.agentStatus()
	if want == s.AgentStatus {
		return
	}
	err := a.b.api.SetStatus(a.ctx, a.log, slackapi.SessionStatus{
		Channel: s.Channel, ThreadTS: s.ThreadTS, Status: want, Title: sessionTitle(s.Task), Initiator: s.Owner,
	})
	if err != nil { // ErrSurfaceOff, or tried again after the next transition
		return
	}
	s.AgentStatus = want
	a.save()
}

// onAgentSessionStopped routes a press on Slack's Stop button to the
// thread's session as a press on h9's Stop, with the same checks.
func (b *Bot) onAgentSessionStopped(e *slackevents.AgentSessionStoppedEvent, keys []string) {
	if e.User == "" || e.Channel == "" || e.ThreadTimestamp == "" {
		return
	}
	b.admit(eventsAPIKind, keys, func() {
		log := b.log.With("channel", e.Channel, "thread", e.ThreadTimestamp, "user", e.User)
		if why := b.perms.refusal(e.User, e.Channel); why != "" {
			b.afterAck(func() { b.api.PostEphemeral(b.bg, log, e.Channel, e.User, e.ThreadTimestamp, text(why)) })
			return
		}
		thread := threadKey{channel: e.Channel, ts: e.ThreadTimestamp}
		v := render.ButtonValue{SessionID: newSessionID(b.sessionTeam(), e.Channel, e.ThreadTimestamp)}
		b.reg.deliver(thread, msgAction{user: e.User, channel: e.Channel, action: actionNativeStop, value: v})
	})
}

// controlRefusal is what a user who may not control the session reads.
// A session with no owner (an automation's without one) is the admins'.
func controlRefusal(action, owner string) string {
	who := "Only <@" + owner + ">, who started this session, or an h9 admin"
	if owner == "" {
		who = "Only an h9 admin"
	}
	if action == actionNativeStop {
		return who + " can stop it, so it goes on."
	}
	return who + " can use these buttons."
}

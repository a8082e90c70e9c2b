package bot

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/bot/render"
)

// The repository's part of the machine: setting up before the first run,
// the outcome of a session done with a repository, Push branch and Open
// pull request.

// evPrepared: the checkout and the repository's setup command finished.
type evPrepared struct {
	stopping bool   // h9 is shutting down: the next start sets up again
	base     string // the base branch as resolved
	warning  string // for the thread (the cache was used without a fetch)
	err      error  // the checkout could not be made
	setup    *setupFailure
}

// setupFailure is a setup command that did not succeed.
type setupFailure struct {
	what   string // what happened, in words
	output string // its last lines
}

func (e evPrepared) apply(m *move) {
	s := m.s
	switch {
	case e.stopping:
		m.saveAndShow()
		return
	case e.err == nil && e.setup == nil:
		s.Repo.Base, s.Repo.Ready = e.base, true
	}
	switch {
	case s.StoppedBy != "":
		m.stopped()
		m.saveAndShow()
	case e.err != nil:
		s.State = stateSetupFailed
		m.logError("preparing the repository failed", "err", e.err)
		m.postNotice(render.RenderSetupFailed(s.ID, failureWords(e.err), ""))
		m.saveAndShow()
	case e.setup != nil:
		s.State = stateSetupFailed
		m.log("setup failed", "what", e.setup.what)
		m.postNotice(render.RenderSetupFailed(s.ID, e.setup.what, e.setup.output))
		m.saveAndShow()
	default:
		if e.warning != "" {
			m.postNotice(text(":warning: " + render.Escape(e.warning)))
		}
		m.startRun(s.Request)
	}
}

// done ends a session whose todos are all completed: with a repository,
// the outcome carries its changes and buttons (effRepoOutcome commits
// what is left first and reads the changes; evOutcome posts them). The
// outcome is due in the record until then, so a takeover makes it.
func (m *move) done(finalText string) {
	s := m.s
	if s.Repo == nil || !s.Repo.Ready {
		m.postWords(render.WithSpend(render.RenderDone(finalText, s.Progress), s.spend()))
		return
	}
	s.Outcome = &RepoOutcome{Text: finalText}
	m.do(effRepoOutcome{})
}

// RepoOutcome is a done session's outcome still to be made: the run's
// final words.
type RepoOutcome struct {
	Text string `json:"text"`
}

// evOutcome: the repository outcome is made: its messages, and the name
// of the diff file to upload ("" without changes). They become pending
// posts, so a takeover posts none of them twice.
type evOutcome struct {
	msgs []render.Message
	diff string
}

func (e evOutcome) apply(m *move) {
	s := m.s
	if s.Outcome == nil {
		return
	}
	s.Outcome = nil
	for _, msg := range e.msgs {
		m.postNotice(msg)
	}
	if e.diff != "" {
		m.post(postDiff, render.Message{Text: e.diff}) // found again by its name
	}
	m.do(effSave{})
}

// notReady takes a reply for a session whose repository is not set up
// (its setup failed, or Stop ended it): the reply waits in the queue and
// the setup runs again, then the session's first request.
func (m *move) notReady(e evReply) {
	s := m.s
	s.Queue = append(s.Queue, QueuedReply{User: e.user, Text: e.text, TS: e.ts, Files: e.files})
	m.do(effReact{ts: e.ts, name: reactionQueued})
	m.startRun(s.Request)
}

// repoAction handles Push branch and Open pull request.
func (e evClick) repoAction(m *move) {
	s := m.s
	switch {
	case s.Repo == nil || !s.Repo.Ready:
		m.postEphemeral(e.user, "This session has no repository checkout, so there is nothing to push.")
	default:
		m.log("repository action", "user", e.user, "action", e.action)
		m.do(effPush{user: e.user, pullRequest: e.action == render.ActionOpenPR})
	}
}

// evPushed: a push (and the pull request asked for) ended; msg says how,
// url is the pull request's when one is open.
type evPushed struct {
	msg    render.Message
	url    string
	head   string         // the commit pushed; "" when the push failed
	follow *follow.Follow // following the request begins (following.go)
}

func (e evPushed) apply(m *move) {
	if e.url != "" {
		evPullRequest{url: e.url}.apply(m)
	}
	m.postNotice(e.msg)
	m.followPushed(e.head, e.follow)
}

// evPullRequest: a pull request of the session branch is open.
type evPullRequest struct{ url string }

func (e evPullRequest) apply(m *move) {
	if r := m.s.Repo; r != nil && r.PullRequest != e.url {
		r.PullRequest = e.url
		m.do(effSave{})
	}
}

// firstRequest is what a new session asks first.
func firstRequest(task string) agent.Request {
	return agent.Request{Intent: agent.IntentTask, Text: task}
}

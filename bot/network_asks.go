package bot

import (
	"slices"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// A host the session's allow list refused is told to the thread once per
// host:port, with Allow for this session, Allow for <repo> and Deny
// (ARCHITECTURE.md, "Network for the agent"). What was told and decided
// lives in the session record, so a restart or another replica never
// tells it twice.

// postNetwork is a refused host's message: its ts is what a decision edits.
const postNetwork = "network"

// maxNetworkAsks bounds the hosts told to one thread: a command that tries
// hundreds of hosts does not flood it (the rest are logged).
const maxNetworkAsks = 20

// SessionNetwork is what the thread was told and decided about hosts.
type SessionNetwork struct {
	Told    []string     `json:"told,omitempty"`    // host:ports told, once each
	Asks    []NetworkAsk `json:"asks,omitempty"`    // told and not yet decided
	Allowed []string     `json:"allowed,omitempty"` // entries allowed for this session
	// Since are the entries allowed (for the session or its repository)
	// since the agent's last request, which tells it of them.
	Since []string `json:"since,omitempty"`
}

// NetworkAsk is a refused host's message waiting for a decision.
type NetworkAsk struct {
	HostPort string `json:"host_port"`
	Command  string `json:"command"`
	Key      string `json:"key"`          // its post's key
	TS       string `json:"ts,omitempty"` // once posted
}

func (n *SessionNetwork) clone() *SessionNetwork {
	if n == nil {
		return nil
	}
	c := *n
	c.Told, c.Asks, c.Allowed, c.Since = slices.Clone(n.Told), slices.Clone(n.Asks), slices.Clone(n.Allowed), slices.Clone(n.Since)
	return &c
}

func (n *SessionNetwork) ask(hostPort string) int {
	if n == nil {
		return -1
	}
	return slices.IndexFunc(n.Asks, func(a NetworkAsk) bool { return a.HostPort == hostPort })
}

// network is the session's network record, made on first use.
func (s *Session) network() *SessionNetwork {
	if s.Network == nil {
		s.Network = &SessionNetwork{}
	}
	return s.Network
}

// repoName is the session's repository name, "" without one.
func (s *Session) repoName() string {
	if s.Repo == nil {
		return ""
	}
	return s.Repo.Name
}

// evNetworkRefused: a command of the session was refused a host that an
// entry could allow.
type evNetworkRefused struct{ command, hostPort string }

func (e evNetworkRefused) apply(m *move) {
	s := m.s
	n := s.network()
	if slices.Contains(n.Told, e.hostPort) {
		return
	}
	if len(n.Told) >= maxNetworkAsks {
		m.log("a refused host was not told: the thread was told of enough", "host", e.hostPort, "told", len(n.Told))
		return
	}
	n.Told = append(n.Told, e.hostPort)
	m.post(postNetwork, render.RenderNetworkAsk(s.ID, e.command, e.hostPort, s.repoName()))
	n.Asks = append(n.Asks, NetworkAsk{HostPort: e.hostPort, Command: e.command, Key: s.Posts[len(s.Posts)-1].Key})
}

// networkPosted records the ts of a refused host's message.
func (s *Session) networkPosted(key, ts string) {
	if s.Network == nil {
		return
	}
	for i := range s.Network.Asks {
		if s.Network.Asks[i].Key == key {
			s.Network.Asks[i].TS = ts
		}
	}
}

// evNetworkClick is a press on a refused host's buttons by a user who may
// control the session; admin: an h9 admin, who alone may allow for the
// repository.
type evNetworkClick struct {
	user, action, hostPort string
	admin                  bool
}

func (e evNetworkClick) apply(m *move) {
	s := m.s
	i := s.Network.ask(e.hostPort)
	if i < 0 {
		m.postEphemeral(e.user, "This host was already decided, so nothing happened.")
		return
	}
	switch e.action {
	case render.ActionNetDeny:
		m.decide(i, e.user, "", false)
	case render.ActionNetAllowSession:
		n := s.Network
		if !slices.Contains(n.Allowed, e.hostPort) {
			n.Allowed = append(n.Allowed, e.hostPort)
		}
		m.decide(i, e.user, "", true)
	case render.ActionNetAllowRepo:
		switch {
		case s.Repo == nil:
			m.postEphemeral(e.user, "This session has no repository, so nothing happened.")
		case !e.admin:
			m.postEphemeral(e.user, "Only an h9 admin can allow a host for a repository; you can allow it for this session.")
		default:
			m.do(effAllowForRepo{user: e.user, repo: s.Repo.Name, hostPort: e.hostPort})
		}
	}
}

// evRepoAllowed: the host was added to the repository's stored allow list
// (err nil), or could not be.
type evRepoAllowed struct {
	user, repo, hostPort string
	err                  error
}

func (e evRepoAllowed) apply(m *move) {
	i := m.s.Network.ask(e.hostPort)
	if e.err != nil {
		m.logError("saving a repository's allowed host", "repo", e.repo, "host", e.hostPort, "err", e.err)
		m.postEphemeral(e.user, "h9 could not save "+e.hostPort+" to "+e.repo+"'s allow list, so nothing changed; try again.")
		return
	}
	if i >= 0 {
		m.decide(i, e.user, e.repo, true)
	}
}

// decide ends the ask at i: its message says who decided what and loses
// its buttons; an allowed host reaches the running commands at once and
// the agent's next request hears of it.
func (m *move) decide(i int, user, repo string, allowed bool) {
	n := m.s.Network
	a := n.Asks[i]
	n.Asks = slices.Delete(n.Asks, i, i+1)
	m.log("refused host decided", "user", user, "host", a.HostPort, "allowed", allowed, "repo", repo)
	if allowed && !slices.Contains(n.Since, a.HostPort) {
		n.Since = append(n.Since, a.HostPort)
	}
	// Saved first: once the thread says allowed, a command starting reads
	// it from the store.
	m.do(effSave{})
	if a.TS != "" {
		m.do(effUpdate{ts: a.TS, msg: render.RenderNetworkDecided(user, a.Command, a.HostPort, repo, allowed)})
	}
	if allowed {
		m.do(effAllowNow{hostPort: a.HostPort})
	}
}

// withNetworkNews gives req the hosts allowed since the agent's last
// request, once: not to a run that only proceeds (it sends no new prompt)
// nor to a plan run (it has no network); the next execution run hears.
func (s *Session) withNetworkNews(req agent.Request) agent.Request {
	if s.Network == nil || len(s.Network.Since) == 0 || req.Intent == agent.IntentProceed || s.Mode == planning.PlanModePlan {
		return req
	}
	req.Network = &agent.NetworkNews{Allowed: s.Network.Since}
	s.Network.Since = nil
	return req
}

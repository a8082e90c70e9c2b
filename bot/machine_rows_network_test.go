package bot

import (
	"slices"
	"testing"

	"github.com/h9-app/h9/bot/render"
)

// A refused host and its buttons do not look at the session's state: the
// rows hold in every state.

const refusedHP = "proxy.golang.org:443"

// asked: the thread was told of refusedHP and its message posted at 1.5.
func asked(s *Session) {
	s.Network = &SessionNetwork{Told: []string{refusedHP}, Asks: []NetworkAsk{{HostPort: refusedHP, Command: "go mod download", Key: "network-1", TS: "1.5"}}}
}

func netClick(action string, admin bool) evNetworkClick {
	return evNetworkClick{user: "U1", action: action, hostPort: refusedHP, admin: admin}
}

func wantAllowed(t *testing.T, s Session, allowed, since []string) {
	t.Helper()
	if s.Network == nil || !slices.Equal(s.Network.Allowed, allowed) || !slices.Equal(s.Network.Since, since) || len(s.Network.Asks) != 0 {
		t.Errorf("network %+v, want allowed %v, since %v, no ask open", s.Network, allowed, since)
	}
}

func networkRows() []row {
	decided := func(s *Session) { s.Network = &SessionNetwork{Told: []string{refusedHP}} }
	return slices.Concat(
		inEvery(all, row{what: "a refused host is told once, recorded before its post", ev: evNetworkRefused{command: "go mod download", hostPort: refusedHP},
			effects: []string{"post network h9_network_ask"},
			check: func(t *testing.T, s Session) {
				if s.Network == nil || !slices.Equal(s.Network.Told, []string{refusedHP}) || len(s.Network.Asks) != 1 || s.Network.Asks[0].Key != s.Posts[0].Key {
					t.Errorf("network %+v, posts %+v", s.Network, s.Posts)
				}
			}}),
		inEvery(all, row{what: "a host told before is not told again", ev: evNetworkRefused{command: "go get", hostPort: refusedHP}}, decided),
		inEvery(all, row{what: "Allow for this session: saved, then the proxy hears of it", ev: netClick(render.ActionNetAllowSession, false),
			effects: []string{"log refused host decided", "save", "update 1.5 h9_network_decided", "allow " + refusedHP + " now"},
			check:   func(t *testing.T, s Session) { wantAllowed(t, s, []string{refusedHP}, []string{refusedHP}) }}, asked),
		inEvery(all, row{what: "Deny: the message says who, nothing is allowed", ev: netClick(render.ActionNetDeny, false),
			effects: []string{"log refused host decided", "save", "update 1.5 h9_network_decided"},
			check:   func(t *testing.T, s Session) { wantAllowed(t, s, nil, nil) }}, asked),
		inEvery(all, row{what: "Allow for <repo> by an admin is stored first", ev: netClick(render.ActionNetAllowRepo, true),
			effects: []string{"allow " + refusedHP + " for backend"}}, asked, withRepo(true)),
		inEvery(all, row{what: "Allow for <repo> is the admins' alone", ev: netClick(render.ActionNetAllowRepo, false),
			effects: []string{"ephemeral to U1: Only an h9 admin can allow a host for a repository; you can allow it for this session."}}, asked, withRepo(true)),
		inEvery(all, row{what: "a decided host is decided", ev: netClick(render.ActionNetAllowSession, true),
			effects: []string{"ephemeral to U1: This host was already decided, so nothing happened."}}, decided),
		inEvery(all, row{what: "the stored repository entry ends the ask; the agent hears of it", ev: evRepoAllowed{user: "U1", repo: "backend", hostPort: refusedHP},
			effects: []string{"log refused host decided", "save", "update 1.5 h9_network_decided", "allow " + refusedHP + " now"},
			check:   func(t *testing.T, s Session) { wantAllowed(t, s, nil, []string{refusedHP}) }}, asked, withRepo(true)),
	)
}

// The hosts allowed since go with the next execution run's request, once;
// a plan run has no network and leaves them for the next one.
func TestNetworkNewsGoesWithTheNextExecutionRun(t *testing.T) {
	t.Parallel()
	news := func(s *Session) { s.Network = &SessionNetwork{Since: []string{refusedHP}} }
	next, effs := transition(sess(stateIdle, news), evReply{user: "U1", text: "go on", ts: "1.7"})
	if next.Request.Network == nil || !slices.Equal(next.Request.Network.Allowed, []string{refusedHP}) || len(next.Network.Since) != 0 {
		t.Errorf("request %+v, since %v (effects %v)", next.Request, next.Network.Since, effs)
	}
	planned, _ := transition(sess(stateIdle, news, planMode), evReply{user: "U1", text: "revise", ts: "1.7"})
	if planned.Request.Network != nil || len(planned.Network.Since) != 1 {
		t.Errorf("a plan run took the news: %+v, since %v", planned.Request, planned.Network.Since)
	}
}

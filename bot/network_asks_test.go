package bot

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
	"github.com/h9-app/h9/workspace/testenv"
)

// netRig is h9's egress proxy wired to the env's bot as cmd/h9 wires it:
// a base allow list, plus what the bot says the thread allowed.
type netRig struct {
	gw  *egress.Gateway
	bot atomic.Pointer[Bot]
}

// allowEntry is the proxy as the bot sees it (cmd/h9's gatewayAllow).
type allowEntry struct{ gw *egress.Gateway }

func (a allowEntry) Allow(sessionID, entry string) error {
	e, err := egress.ParseEntry(entry)
	if err == nil {
		a.gw.Allow(sessionID, e)
	}
	return err
}

// loopbackDNS resolves every *.test name to 127.0.0.1: the one boundary
// replaced, so the test's hosts are its local servers.
type loopbackDNS struct{}

func (loopbackDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newNetRig(t *testing.T, base ...string) *netRig {
	t.Helper()
	basePol, err := egress.NewPolicy(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &netRig{}
	policy := func(sid string) (egress.Policy, error) {
		_, allowed, err := r.bot.Load().SessionNetwork(context.Background(), sid)
		if err != nil {
			return egress.Policy{}, err
		}
		more, err := egress.NewPolicy(allowed, nil)
		return basePol.With(more.Entries()...), err
	}
	refused := func(a egress.Attempt) { r.bot.Load().NetworkRefused(a.SessionID, a.Command, a.HostPort) }
	if r.gw, err = egress.New(egress.Config{Policy: policy, Refused: refused, Resolver: loopbackDNS{}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.gw.Close() })
	return r
}

// newNetEnv is a bot whose workspaces run in the real sandbox, their
// only way out the rig's proxy.
func newNetEnv(t *testing.T, r *netRig, cfgFn ...func(*Config)) *env {
	t.Helper()
	testenv.Need(t, "bwrap")
	cfgFn = append(cfgFn, func(c *Config) { c.Network = allowEntry{r.gw} })
	e := prepareEnv(t, t.TempDir(), cfgFn...)
	e.workspaces = func(c *workspace.Config) { c.Sandbox, c.Network = "bwrap", r.gw }
	e.start()
	r.bot.Store(e.bot)
	return e
}

// helloServer is a local server the sandbox reaches by the name host
// (through the proxy: the namespace's own loopback is not the host's).
func helloServer(t *testing.T, host string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello-through-proxy") }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return host + ":" + port
}

// A command refused two hosts (one of them twice): the thread hears of
// each once, with the command's words and the buttons; Allow for this
// session lets the next run's command through, and its request says so;
// Deny keeps the host out and says who denied; a stranger's click and a
// second decision change nothing; a restart tells nothing again.
func TestRefusedHostToldOnceThenAllowedOrDenied(t *testing.T) {
	// 127.0.0.1 names the address the test names resolve to; the names
	// themselves are not allowed.
	r := newNetRig(t, "allowed.test", "127.0.0.1")
	e := newNetEnv(t, r)
	good, bad := helloServer(t, "good.test"), helloServer(t, "bad.test")
	curl := func(hp string) string { return "curl -sS -m 20 http://" + hp + "/" }
	e.model.Enqueue(
		fakemodel.ToolCall("bash", fmt.Sprintf(`{"command":"%s; %s; %s"}`, curl(good), curl(good), curl(bad))),
		fakemodel.Text("Both refused."),
	)
	thread := e.startSession("run", "fetch two things")
	e.waitMessage(thread, "Both refused.", 1)
	e.waitMessage(thread, render.ActionNetAllowSession, 2)
	if out := e.toolResult(1); !strings.Contains(out, "h9 refused "+good) || !strings.Contains(out, "press Allow on the message h9 posts about it in the session's Slack thread") {
		t.Errorf("the command's 403 does not say how to allow the host:\n%s", out)
	}
	goodAsk, badAsk := e.networkAsk(thread, good), e.networkAsk(thread, bad)
	want := "` tried to reach `" + good + "`, which is not allowed"
	if !strings.Contains(goodAsk.Text, want) || !strings.HasPrefix(goodAsk.Text, "`curl -sS -m 20 http://"+good+"/`") {
		t.Errorf("ask text %q, want the curl that tried (not the whole command line) and %q", goodAsk.Text, want)
	}
	if b := blocksText(goodAsk); !strings.Contains(b, render.LabelNetAllowSession) || !strings.Contains(b, render.LabelNetDeny) || strings.Contains(b, render.ActionNetAllowRepo) {
		t.Errorf("buttons of a session without a repository: %s", b)
	}

	sid := newSessionID(testTeam, testChannel, thread)
	e.allowAndDeny(sid, goodAsk, badAsk, bad)

	e.model.Enqueue(
		fakemodel.ToolCall("bash", fmt.Sprintf(`{"command":"%s; %s"}`, curl(good), curl(bad))),
		fakemodel.Text("Fetched again."),
	)
	calls := len(e.model.Requests())
	e.reply(testUser, thread, "try again")
	e.waitMessage(thread, "Fetched again.", 1)
	if first := e.lastUserMessage(calls); !strings.Contains(first, "allowed your commands to reach `"+good+"`") || strings.Contains(first, bad) {
		t.Errorf("the next request does not say what was allowed: %q", first)
	}
	if out := e.toolResult(calls + 1); !strings.Contains(out, "hello-through-proxy") || !strings.Contains(out, "h9 refused "+bad) {
		t.Errorf("after Allow and Deny the command saw:\n%s", out)
	}
	if n := len(e.botMessages(thread, "tried to reach")); n != 2 {
		t.Errorf("%d network messages in the thread, want 2", n)
	}

	e.restart()
	r.bot.Store(e.bot)
	e.bot.NetworkRefused(sid, "curl", bad)
	e.bot.NetworkRefused(sid, "curl", "other.test:80")
	e.networkAsk(thread, "other.test:80")
	if n := len(e.botMessages(thread, "tried to reach `"+bad+"`")); n != 1 {
		t.Errorf("after a restart %s was told %d times", bad, n)
	}
}

// allowAndDeny: a stranger's click is refused, the owner allows the first
// ask and denies the second (denied is its host), both messages lose their
// buttons, and a stale click on a decided host changes nothing.
func (e *env) allowAndDeny(sid string, allow, deny fakeslack.Message, denied string) {
	e.t.Helper()
	e.click("U2", allow.TS, render.ActionNetAllowSession)
	e.waitEphemeral(testChannel, "U2", "Only <@"+testUser+">")
	e.click(testUser, allow.TS, render.ActionNetAllowSession)
	e.click(testUser, deny.TS, render.ActionNetDeny)
	e.waitFor("both decided", func() bool {
		g, _ := e.slack.Message(testChannel, allow.TS)
		b, _ := e.slack.Message(testChannel, deny.TS)
		return strings.Contains(g.Text, "Allowed by <@"+testUser+"> for this session") && strings.Contains(b.Text, "Denied by <@"+testUser+">")
	})
	for _, ts := range []string{allow.TS, deny.TS} {
		if m, _ := e.slack.Message(testChannel, ts); strings.Contains(string(m.Blocks), render.ActionNetDeny) {
			e.t.Errorf("a decided message keeps its buttons: %s", m.Blocks)
		}
	}
	e.clickValue(testUser, deny.TS, render.ActionNetAllowSession, render.BlockNetworkActions, render.ButtonValue{SessionID: sid, StepID: denied})
	e.waitEphemeral(testChannel, testUser, "already decided")
}

// networkAsk waits for the thread's message about hostPort.
func (e *env) networkAsk(thread, hostPort string) fakeslack.Message {
	e.t.Helper()
	var m fakeslack.Message
	e.waitFor("the message about "+hostPort, func() bool {
		got := e.botMessages(thread, "tried to reach `"+hostPort+"`")
		if len(got) > 0 {
			m = got[0]
		}
		return len(got) > 0
	})
	return m
}

// toolResult is the last tool message of the i-th model request.
func (e *env) toolResult(i int) string {
	reqs := e.model.Requests()
	if i >= len(reqs) {
		return ""
	}
	msgs := reqs[i].Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == "tool" {
			return msgs[j].Content
		}
	}
	return ""
}

// In a repository session an admin may allow a refused host for the
// repository: it is stored, shown by /h9 repos, and on the allow list of
// the repository's other sessions; the owner who is no admin is told so.
func TestRefusedHostAllowedForTheRepository(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	const admin = "U9"
	e := newRepoEnv(t, "", func(c *Config) { c.Admins = []string{admin} })
	e.model.Enqueue(fakemodel.Text("Nothing to do."))
	thread := e.startSession("run", "[repo=backend] look around")
	e.waitMessage(thread, "Nothing to do.", 1)
	sid := newSessionID(testTeam, testChannel, thread)
	const hp = "proxy.golang.org:443"
	e.bot.NetworkRefused(sid, "go mod download", hp)
	ask := e.networkAsk(thread, hp)
	if !strings.HasPrefix(ask.Text, "`go mod download` tried to reach `"+hp+"`, which is not allowed") {
		t.Errorf("ask text %q", ask.Text)
	}
	if b := blocksText(ask); !strings.Contains(b, "Allow for backend") {
		t.Errorf("no repository button: %s", b)
	}

	e.click(testUser, ask.TS, render.ActionNetAllowRepo)
	e.waitEphemeral(testChannel, testUser, "Only an h9 admin")
	if _, allowed, _ := e.bot.SessionNetwork(e.ctx, sid); len(allowed) != 0 {
		t.Fatalf("allowed before an admin did: %q", allowed)
	}
	e.click(admin, ask.TS, render.ActionNetAllowRepo)
	e.waitFor("the decision", func() bool {
		m, _ := e.slack.Message(testChannel, ask.TS)
		return strings.Contains(m.Text, "Allowed by <@"+admin+"> for backend")
	})
	if ack := ackText(e.slash(testUser, testChannel, "repos")); !strings.Contains(ack, "allowed from threads: `"+hp+"`") {
		t.Errorf("/h9 repos: %s", ack)
	}

	e.model.Enqueue(fakemodel.Text("Second."))
	other := e.startSession("run", "[repo=backend] another")
	e.waitMessage(other, "Second.", 1)
	repo, allowed, err := e.bot.SessionNetwork(e.ctx, newSessionID(testTeam, testChannel, other))
	if err != nil || repo != "backend" || len(allowed) != 1 || allowed[0] != hp {
		t.Errorf("another session of backend: %q %q %v", repo, allowed, err)
	}
	e.restart()
	if ack := ackText(e.slash(testUser, testChannel, "repos")); !strings.Contains(ack, hp) {
		t.Errorf("/h9 repos after a restart: %s", ack)
	}
}

// Allow for this session reaches a command that is still running: its
// next request through the proxy gets through, without a new command.
func TestAllowReachesTheRunningCommand(t *testing.T) {
	r := newNetRig(t, "allowed.test", "127.0.0.1")
	e := newNetEnv(t, r)
	hp := helloServer(t, "late.test")
	loop := "for i in $(seq 1 600); do curl -s -m 5 http://" + hp + "/ | grep -q hello-through-proxy && echo GOT-IT-AFTER-ALLOW && break; sleep 0.1; done"
	e.model.Enqueue(fakemodel.ToolCall("bash", `{"command":"`+loop+`"}`), fakemodel.Text("Loop ended."))
	thread := e.startSession("run", "wait for the host")
	ask := e.networkAsk(thread, hp)
	e.click(testUser, ask.TS, render.ActionNetAllowSession)
	e.waitMessage(thread, "Loop ended.", 1)
	if out := e.toolResult(1); !strings.Contains(out, "GOT-IT-AFTER-ALLOW") {
		t.Errorf("the running command never got through:\n%s", out)
	}
}

// An admin removes a host a thread allowed for a repository: /h9 repos no
// longer shows it (the store no longer has it); anyone else is refused,
// and removing it again says it was not there.
func TestForgetAHostAllowedForTheRepository(t *testing.T) {
	const admin = "U9"
	e := newRepoEnv(t, "", func(c *Config) { c.Admins = []string{admin} })
	if err := e.bot.addRepoAllowed(e.ctx, "backend", "proxy.golang.org:443"); err != nil {
		t.Fatal(err)
	}
	if ack := ackText(e.slash(testUser, testChannel, "repos forget backend proxy.golang.org:443")); !strings.Contains(ack, "Only an h9 admin") {
		t.Errorf("a non-admin's forget: %s", ack)
	}
	if ack := ackText(e.slash(admin, testChannel, "repos forget nope x.test")); !strings.Contains(ack, "There is no repository `nope`") {
		t.Errorf("an unknown repository: %s", ack)
	}
	e.slash(admin, testChannel, "repos forget backend proxy.golang.org:443")
	e.waitEphemeral(testChannel, admin, "Removed `proxy.golang.org:443` from backend")
	if ack := ackText(e.slash(testUser, testChannel, "repos")); strings.Contains(ack, "proxy.golang.org") {
		t.Errorf("/h9 repos still shows it: %s", ack)
	}
	e.slash(admin, testChannel, "repos forget backend proxy.golang.org:443")
	e.waitEphemeral(testChannel, admin, "was not allowed for backend from a thread")
}

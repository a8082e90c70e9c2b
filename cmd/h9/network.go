package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/netx"
)

// checkNetwork validates H9_NETWORK_ALLOW and H9_NETWORK_PRESETS (the
// allow list of sessions without a repository).
func (c *Config) checkNetwork() error {
	c.NetworkAllow, c.NetworkPresets = cleanList(c.NetworkAllow), cleanList(c.NetworkPresets)
	for _, e := range c.NetworkAllow {
		if _, err := egress.ParseEntry(e); err != nil {
			_, why, _ := strings.Cut(err.Error(), ": ") // after egress's "bad network entry %q"
			return invalid("H9_NETWORK_ALLOW: %q is not host, *.suffix, host:port or an IP address: %s", e, why)
		}
	}
	if _, err := egress.NewPolicy(nil, c.NetworkPresets); err != nil {
		return invalid("H9_NETWORK_PRESETS: %s", strings.TrimPrefix(err.Error(), egress.ErrBadEntry.Error()+": "))
	}
	return nil
}

// networkWanted: some session may have an allow list.
func (c Config) networkWanted() bool {
	if len(c.NetworkAllow) > 0 || len(c.NetworkPresets) > 0 {
		return true
	}
	for _, r := range c.repos {
		if !r.Network.Empty() {
			return true
		}
	}
	return false
}

// networkPolicies picks a session's allow list: its repository's, or
// H9_NETWORK_ALLOW's without one, with what its thread allowed. threads is
// the bot, set once it exists.
type networkPolicies struct {
	none    egress.Policy
	repos   map[string]egress.Policy
	threads atomic.Pointer[threadNetwork]
	log     *slog.Logger
}

// threadNetwork is what the bot knows of sessions' networks.
type threadNetwork interface {
	SessionNetwork(ctx context.Context, sessionID string) (repo string, allowed []string, err error)
	NetworkRefused(sessionID, command, hostPort string)
}

func (c Config) newNetworkPolicies() (*networkPolicies, error) {
	none, err := egress.NewPolicy(c.NetworkAllow, c.NetworkPresets)
	if err != nil {
		return nil, err
	}
	np := &networkPolicies{none: none, repos: map[string]egress.Policy{}, log: slog.New(slog.DiscardHandler)}
	for _, r := range c.repos {
		if np.repos[r.Name], err = r.Network.Policy(); err != nil {
			return nil, err
		}
	}
	return np, nil
}

func (np *networkPolicies) policy(sessionID string) (egress.Policy, error) {
	threads := np.threads.Load()
	if threads == nil {
		return egress.Policy{}, errors.New("h9 is still starting")
	}
	repo, allowed, err := (*threads).SessionNetwork(context.Background(), sessionID)
	if err != nil {
		return egress.Policy{}, err
	}
	base := np.repos[repo]
	if repo == "" || repo == gitrepo.NoRepo {
		base = np.none
	}
	if base.Empty() {
		return base, nil // no allow list configured: the thread is never asked, so nothing was added
	}
	var more []egress.Entry
	for _, s := range allowed {
		e, err := egress.ParseEntry(s)
		if err != nil {
			np.log.Warn("an entry allowed in a thread does not parse; left out", "session", sessionID, "entry", s, "err", err)
			continue
		}
		more = append(more, e)
	}
	return base.With(more...), nil
}

// refused tells the bot of a refusal its thread may fix.
func (np *networkPolicies) refused(a egress.Attempt) {
	np.log.Warn("a command's request was refused by the network allow list", "session", a.SessionID, "host", a.HostPort, "command", a.Command)
	if threads := np.threads.Load(); threads != nil {
		(*threads).NetworkRefused(a.SessionID, a.Command, a.HostPort)
	}
}

// newGateway is h9's egress proxy when some allow list is configured
// (nil otherwise: no command has network, as before).
func (c Config) newGateway(np *networkPolicies, m egress.Metrics, log *slog.Logger) (*egress.Gateway, error) {
	if !c.networkWanted() {
		return nil, nil
	}
	np.log = log
	return egress.New(egress.Config{Policy: np.policy, Metrics: m, Refused: np.refused})
}

// loadRepoSecrets reads the values of the repositories' `secrets:` from
// h9's environment (hideSecrets kept them out of its image; dropSecretEnv
// removes them once read); one not set stops h9.
func (c *Config) loadRepoSecrets() error {
	for _, r := range c.repos {
		for _, n := range r.Secrets {
			v := os.Getenv(n)
			if v == "" {
				return invalid("repository %q: secrets: %s is not set in h9's environment", r.Name, n)
			}
			if c.secrets == nil {
				c.secrets = map[string]string{}
			}
			c.secrets[n] = v
		}
	}
	return nil
}

// secretList is c.secrets for the workspace, which scrubs them.
func (c Config) secretList() []workspace.Secret {
	var list []workspace.Secret
	for n, v := range c.secrets {
		list = append(list, workspace.Secret{Name: n, Value: v})
	}
	return list
}

// network is the egress proxy and its policies, as run wires them.
type network struct {
	policies *networkPolicies
	gateway  *egress.Gateway // nil: no allow list anywhere
}

func (c Config) startNetwork(m egress.Metrics, log *slog.Logger) (network, error) {
	np, err := c.newNetworkPolicies()
	if err != nil {
		return network{}, err
	}
	gw, err := c.newGateway(np, m, log)
	if err != nil {
		return network{}, err
	}
	return network{policies: np, gateway: gw}, nil
}

// into gives the workspaces the proxy (when there is one) and the secrets.
func (n network) into(wc workspace.Config, c Config) workspace.Config {
	if n.gateway != nil {
		wc.Network = n.gateway
	}
	wc.Secrets = c.secretList()
	return wc
}

// serve lets the proxy ask the bot for a session's allow list and tell it
// of refused hosts.
func (n network) serve(b threadNetwork) { n.policies.threads.Store(&b) }

// intoBot lets the bot give a host allowed in a thread to the session's
// running commands.
func (n network) intoBot(bc bot.Config) bot.Config {
	if n.gateway != nil {
		bc.Network = gatewayAllow{n.gateway}
	}
	return bc
}

// gatewayAllow is the proxy as the bot sees it.
type gatewayAllow struct{ gw *egress.Gateway }

func (g gatewayAllow) Allow(sessionID, entry string) error {
	e, err := egress.ParseEntry(entry)
	if err != nil {
		return err
	}
	g.gw.Allow(sessionID, e)
	return nil
}

func (n network) close() {
	if n.gateway != nil {
		n.gateway.Close()
	}
}

// repoSecretNames are the `secrets:` of H9_REPOS_FILE's repositories,
// read before anything else so hideSecrets keeps them out of h9's
// environment image too. A file that does not parse names none here:
// the configuration's check then stops h9 with its error.
func repoSecretNames() []string {
	path := os.Getenv(envPrefix + "_REPOS_FILE")
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	repos, err := gitrepo.ParseFile(data)
	if err != nil {
		return nil
	}
	var names []string
	for _, r := range repos {
		names = append(names, r.Secrets...)
	}
	return names
}

// checkEgress runs the egress proxy end to end: a sandboxed command, in
// its own network namespace, reaches an allowed loopback listener through
// the proxy and is refused another.
func checkEgress(ctx context.Context, cfg Config) finding {
	if !cfg.networkWanted() {
		return ok("no allow list: the agent's commands have no network")
	}
	allowed, err := netx.ListenDiscard("127.0.0.1:0")
	if err != nil {
		return failed("check that h9 may listen on 127.0.0.1", "%v", err)
	}
	defer allowed.Close()
	other, err := netx.ListenDiscard("127.0.0.1:0")
	if err != nil {
		return failed("check that h9 may listen on 127.0.0.1", "%v", err)
	}
	defer other.Close()
	pol, err := egress.NewPolicy([]string{allowed.Addr().String()}, nil)
	if err != nil {
		return failed("report this as a bug", "%v", err)
	}
	gw, err := egress.New(egress.Config{Policy: func(string) (egress.Policy, error) { return pol, nil }})
	if err != nil {
		return failed("check TMPDIR", "%v", err)
	}
	defer gw.Close()
	root, err := os.MkdirTemp("", "h9-doctor-net-")
	if err != nil {
		return failed("check TMPDIR", "cannot create a probe directory: %v", err)
	}
	defer os.RemoveAll(root)
	wc := cfg.workspaceConfig(filepath.Join(root, "workspaces"))
	wc.Template, wc.Network = "", gw
	m, err := workspace.NewManager(wc)
	if err != nil {
		return failed(bwrapHint, "%v", err)
	}
	ws, err := m.Open("doctor/network/probe")
	if err != nil {
		return failed("check H9_DATA_DIR", "%v", err)
	}
	defer ws.Close()
	return probeNetwork(ctx, ws, allowed.Addr().String(), other.Addr().String())
}

// probeNetwork asks the proxy for both listeners from inside the sandbox.
func probeNetwork(ctx context.Context, ws *workspace.Workspace, allowed, other string) finding {
	connect := func(addr string) string {
		return fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' >&3 && read -r line <&3 && echo "%s ${line}"; exec 3>&-;`, addr, addr, addr)
	}
	res, err := ws.Bash(ctx, connect(allowed)+connect(other), workspace.BashOptions{})
	if err != nil {
		return failed(bwrapHint, "running the probe: %v", err)
	}
	out := res.Output
	reached := strings.Contains(out, allowed+" HTTP/1.1 200")
	refused := strings.Contains(out, other+" HTTP/1.1 403")
	if !reached || !refused {
		return failed("the proxy does not behave as documented (docs/network.md): do not give the agent network like this",
			"through h9's proxy the allowed listener answered %v and the other was refused %v: %s", reached, refused, strings.TrimSpace(out))
	}
	return ok("a sandboxed command reached an allowed loopback listener (%s) through h9's proxy and was refused another (%s) with 403", allowed, other)
}

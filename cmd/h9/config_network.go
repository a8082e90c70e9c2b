package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// checkNetwork validates H9_NETWORK_ALLOW and H9_NETWORK_PRESETS (the
// allow list of sessions without a repository).
func (c *Config) checkNetwork() error {
	c.NetworkAllow, c.NetworkPresets = cleanList(c.NetworkAllow), cleanList(c.NetworkPresets)
	for _, e := range c.NetworkAllow {
		if _, err := egress.ParseEntry(e); err != nil {
			return invalid("H9_NETWORK_ALLOW: %q is not host, *.suffix, host:port or an IP address (%v)", e, errors.Unwrap(err))
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
// H9_NETWORK_ALLOW's without one. repoOf is the bot's, set once it exists.
type networkPolicies struct {
	none   egress.Policy
	repos  map[string]egress.Policy
	repoOf atomic.Pointer[func(ctx context.Context, sessionID string) (string, error)]
}

func (c Config) newNetworkPolicies() (*networkPolicies, error) {
	none, err := egress.NewPolicy(c.NetworkAllow, c.NetworkPresets)
	if err != nil {
		return nil, err
	}
	np := &networkPolicies{none: none, repos: map[string]egress.Policy{}}
	for _, r := range c.repos {
		if np.repos[r.Name], err = r.Network.Policy(); err != nil {
			return nil, err
		}
	}
	return np, nil
}

func (np *networkPolicies) policy(sessionID string) (egress.Policy, error) {
	lookup := np.repoOf.Load()
	if lookup == nil {
		return egress.Policy{}, errors.New("h9 is still starting")
	}
	repo, err := (*lookup)(context.Background(), sessionID)
	if err != nil {
		return egress.Policy{}, err
	}
	if repo == "" || repo == gitrepo.NoRepo {
		return np.none, nil
	}
	return np.repos[repo], nil
}

// newGateway is h9's egress proxy when some allow list is configured
// (nil otherwise: no command has network, as before).
func (c Config) newGateway(np *networkPolicies, m egress.Metrics, log *slog.Logger) (*egress.Gateway, error) {
	if !c.networkWanted() {
		return nil, nil
	}
	refused := func(a egress.Attempt) {
		log.Warn("a command's request was refused by the network allow list", "session", a.SessionID, "host", a.HostPort, "command", a.Command)
	}
	return egress.New(egress.Config{Policy: np.policy, Metrics: m, Refused: refused})
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

// serve lets the proxy ask the bot for a session's repository.
func (n network) serve(repoOf func(ctx context.Context, sessionID string) (string, error)) {
	n.policies.repoOf.Store(&repoOf)
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

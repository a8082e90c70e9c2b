package gitrepo

import (
	"fmt"
	"strings"

	"github.com/h9-app/h9/workspace/egress"
)

// Network is a repository's `network:` key: the hosts its sessions'
// commands may reach through h9's egress proxy (ARCHITECTURE.md, "Network
// for the agent").
type Network struct {
	Allow   []string `yaml:"allow"`   // host, *.suffix, host:port, an IP (with its port)
	Presets []string `yaml:"presets"` // packages
}

// Policy is the allow list the entries and presets make.
func (n Network) Policy() (egress.Policy, error) { return egress.NewPolicy(n.Allow, n.Presets) }

// Empty reports whether the repository allows no host.
func (n Network) Empty() bool { return len(n.Allow) == 0 && len(n.Presets) == 0 }

func (n Network) check() error {
	_, err := n.Policy()
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), egress.ErrBadEntry.Error()+" "))
	}
	return nil
}

// checkSecretNames accepts environment variable names, each once.
func checkSecretNames(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case !envNameRE.MatchString(n):
			return fmt.Errorf("%q is not an environment variable name", n)
		case seen[n]:
			return fmt.Errorf("%q is listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// checkSecretValues: every repository's secret has a value in h9's
// environment, or h9 does not start.
func checkSecretValues(repos []Repo, values map[string]string) error {
	for _, r := range repos {
		for _, n := range r.Secrets {
			if values[n] == "" {
				return fmt.Errorf("%w: repository %q: secrets: %s is not set in h9's environment", ErrInvalidConfig, r.Name, n)
			}
		}
	}
	return nil
}

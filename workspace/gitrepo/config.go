package gitrepo

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

// Repo is one configured repository (H9_REPOS, H9_REPOS_FILE).
type Repo struct {
	Name     string   `yaml:"name"`     // unique; what users type in repo=…
	URL      string   `yaml:"url"`      // anything git clone accepts
	Branch   string   `yaml:"branch"`   // base branch; "" = the remote's HEAD
	Setup    string   `yaml:"setup"`    // run once in each new workspace, sandboxed, with network
	Channels []string `yaml:"channels"` // channels where this repo is the default
	GitHub   string   `yaml:"github"`   // owner/name for pull requests; "" = from a github.com URL
	// Network is what the agent's commands may reach through h9's proxy
	// (network.go); empty: no network, as always.
	Network Network `yaml:"network"`
	// Secrets are names of h9's environment variables given to Setup only.
	Secrets []string `yaml:"secrets"`
	// Forge is where requests are opened and followed (forgeconfig.go);
	// nil after Check: on no forge h9 knows.
	Forge *ForgeConfig `yaml:"forge"`
	// FollowUp is what happens after the request: ask (""), auto or off (followup.go).
	FollowUp string `yaml:"follow_up"`
}

// NoRepo is the name that means "no repository" (/h9 repo none, repo=none).
const NoRepo = "none"

var (
	nameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	githubRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)
	channelRE = regexp.MustCompile(`^[CGD][A-Z0-9]+$`)
)

// ParseList reads H9_REPOS: name=URL pairs separated by commas.
func ParseList(s string) ([]Repo, error) {
	var out []Repo
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, u, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not name=URL", ErrInvalidConfig, part)
		}
		out = append(out, Repo{Name: strings.TrimSpace(name), URL: strings.TrimSpace(u)})
	}
	return out, nil
}

// ParseFile reads H9_REPOS_FILE's YAML: a "repos:" list. Unknown keys are
// an error, so a typo does not silently drop a setting.
func ParseFile(data []byte) ([]Repo, error) {
	var f struct {
		Repos []Repo `yaml:"repos"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidConfig, explainYAML(err))
	}
	return f.Repos, nil
}

// Check validates repos and fills their defaults (the GitHub name of a
// github.com URL). Names are unique regardless of case, and a channel is
// the default of one repository at most.
func Check(repos []Repo) ([]Repo, error) {
	out := make([]Repo, 0, len(repos))
	names := map[string]bool{}
	channels := map[string]string{}
	for _, r := range repos {
		r, err := r.check()
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(r.Name)
		if names[key] {
			return nil, fmt.Errorf("%w: repository %q is defined twice", ErrInvalidConfig, r.Name)
		}
		names[key] = true
		for _, c := range r.Channels {
			if other, dup := channels[c]; dup {
				return nil, fmt.Errorf("%w: channel %s is the default of both %q and %q", ErrInvalidConfig, c, other, r.Name)
			}
			channels[c] = r.Name
		}
		out = append(out, r)
	}
	return out, nil
}

func (r Repo) check() (Repo, error) {
	bad := func(format string, a ...any) (Repo, error) {
		return r, fmt.Errorf("%w: repository %q: %s", ErrInvalidConfig, r.Name, fmt.Sprintf(format, a...))
	}
	r.Name, r.URL, r.Branch, r.GitHub = strings.TrimSpace(r.Name), strings.TrimSpace(r.URL), strings.TrimSpace(r.Branch), strings.TrimSpace(r.GitHub)
	switch {
	case !nameRE.MatchString(r.Name):
		return bad("the name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	case strings.EqualFold(r.Name, NoRepo):
		return bad("%q is reserved (it means no repository)", NoRepo)
	case r.URL == "":
		return bad("url is required")
	case strings.HasPrefix(r.URL, "-") || strings.ContainsFunc(r.URL, isSpaceOrControl):
		return bad("url %q is not a repository URL", Redact(r.URL))
	case r.Branch != "" && !ValidBranch(r.Branch):
		return bad("branch %q is not a valid branch name", r.Branch)
	case r.GitHub != "" && !githubRE.MatchString(r.GitHub):
		return bad("github %q is not owner/name", r.GitHub)
	case !validFollowUp(r.FollowUp):
		return bad("follow_up %q is not ask, auto or off", r.FollowUp)
	}
	if err := r.Network.check(); err != nil {
		return bad("network: %v", err)
	}
	if err := checkSecretNames(r.Secrets); err != nil {
		return bad("secrets: %v", err)
	}
	for _, c := range r.Channels {
		if !channelRE.MatchString(c) {
			return bad("channels: %q is not a Slack channel ID (like C0123456789)", c)
		}
	}
	r, err := r.checkForge()
	if err != nil {
		return bad("%v", err)
	}
	if localPath(r.URL) {
		abs, err := filepath.Abs(r.URL)
		if err != nil {
			return bad("url %q: %v", r.URL, err)
		}
		r.URL = abs // h9's git runs in the cache, not where h9 was started
	}
	return r, nil
}

// localPath reports whether git reads u as a path: no scheme, and no
// scp-like "host:" before its first slash.
func localPath(u string) bool {
	if strings.Contains(u, "://") {
		return false
	}
	colon := strings.IndexByte(u, ':')
	return colon < 0 || strings.Contains(u[:colon], "/")
}

func isSpaceOrControl(c rune) bool { return c <= ' ' || c == 0x7f }

// Redact removes a password or token from a URL, for messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	} else if u.Scheme == "https" || u.Scheme == "http" {
		u.User = url.User("REDACTED") // a token alone sits where the user name goes
	}
	return u.String()
}

// What h9 does with review feedback and failing checks on a request it
// opened (a repo entry's follow_up; ARCHITECTURE.md, "After the pull
// request").
const (
	FollowAsk  = "ask"  // post each batch with Address feedback and Ignore (the default)
	FollowAuto = "auto" // start addressing each batch at once
	FollowOff  = "off"  // do not follow
)

func validFollowUp(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", FollowAsk, FollowAuto, FollowOff:
		return true
	}
	return false
}

// FollowMode is the repository's follow_up, ask when unset.
func (r Repo) FollowMode() string {
	if m := strings.ToLower(strings.TrimSpace(r.FollowUp)); m != "" {
		return m
	}
	return FollowAsk
}

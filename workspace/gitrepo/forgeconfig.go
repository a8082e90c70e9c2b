package gitrepo

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/h9-app/h9/workspace/forge"
)

// ForgeConfig is a repository's forge: key (ARCHITECTURE.md, "Forges").
// After Check, Type and Project are set when the repository has a forge;
// API "" means the default of its type (H9_GITHUB_API_URL,
// H9_GITLAB_API_URL), and TokenEnv is set.
type ForgeConfig struct {
	Type     string `yaml:"type"`      // github, gitlab or gitea
	Project  string `yaml:"project"`   // owner/name; GitLab group/subgroup/name
	API      string `yaml:"api"`       // REST base ending in /
	TokenEnv string `yaml:"token_env"` // the variable holding the token
}

// DefaultTokenEnv is the variable that holds a forge type's token unless
// token_env names another.
var DefaultTokenEnv = map[forge.Kind]string{
	forge.GitHub: "H9_GITHUB_TOKEN", forge.GitLab: "H9_GITLAB_TOKEN", forge.Gitea: "H9_GITEA_TOKEN",
}

var (
	projectRE  = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*(/[A-Za-z0-9_.][A-Za-z0-9_.-]*)+$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	knownHosts = map[string]forge.Kind{"github.com": forge.GitHub, "gitlab.com": forge.GitLab}
)

// checkForge validates r.Forge and fills its defaults from the URL; the
// old github: key means forge {type: github, project: …}. A repository on
// no known forge, and without forge:, has none (Push branch only).
func (r Repo) checkForge() (Repo, error) {
	host, path := urlHostPath(r.URL)
	f := r.Forge
	if r.GitHub != "" {
		if f != nil && (f.Type != "" && f.Type != string(forge.GitHub) || f.Project != "" && f.Project != r.GitHub) {
			return r, fmt.Errorf("github %q and forge %s/%s disagree: keep one", r.GitHub, f.Type, f.Project)
		}
		if f == nil {
			f = &ForgeConfig{}
		}
		f.Type, f.Project = string(forge.GitHub), r.GitHub
	}
	if f == nil {
		kind, known := knownHosts[strings.ToLower(host)]
		if !known {
			return r, nil
		}
		f = &ForgeConfig{Type: string(kind)}
	}
	c := *f
	c.Type, c.Project, c.API, c.TokenEnv = strings.ToLower(strings.TrimSpace(c.Type)), strings.Trim(strings.TrimSpace(c.Project), "/"), strings.TrimSpace(c.API), strings.TrimSpace(c.TokenEnv)
	if c.Type == "" {
		kind, known := knownHosts[strings.ToLower(host)]
		if !known {
			return r, fmt.Errorf("forge.type is required for a repository on %q (github, gitlab or gitea)", host)
		}
		c.Type = string(kind)
	}
	kind := forge.Kind(c.Type)
	if _, ok := DefaultTokenEnv[kind]; !ok {
		return r, fmt.Errorf("forge.type %q is not github, gitlab or gitea", c.Type)
	}
	if c.Project == "" {
		c.Project = path
	}
	switch {
	case c.Project == "":
		return r, fmt.Errorf("forge.project is required: it cannot be read from the url")
	case !projectRE.MatchString(c.Project) || kind != forge.GitLab && strings.Count(c.Project, "/") != 1:
		return r, fmt.Errorf("forge.project %q is not %s", c.Project, map[bool]string{true: "group/…/name", false: "owner/name"}[kind == forge.GitLab])
	case c.API == "" && kind == forge.Gitea:
		return r, fmt.Errorf("forge.api is required for gitea (like https://git.example.com/api/v1/)")
	case c.API != "" && !validAPI(c.API):
		return r, fmt.Errorf("forge.api %q must be an http(s) URL without user or password", c.API)
	case c.TokenEnv != "" && !envNameRE.MatchString(c.TokenEnv):
		return r, fmt.Errorf("forge.token_env %q is not an environment variable name", c.TokenEnv)
	}
	if c.API != "" {
		c.API = apiBase(kind, c.API)
	}
	if c.TokenEnv == "" {
		c.TokenEnv = DefaultTokenEnv[kind]
	}
	r.Forge = &c
	if kind == forge.GitHub {
		r.GitHub = c.Project // the one name older code reads
	}
	return r, nil
}

func validAPI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil && u.RawQuery == "" && u.Fragment == ""
}

// apiPaths is where GitLab's and Gitea's REST API lives below the server's
// root.
var apiPaths = map[forge.Kind]string{forge.GitLab: "api/v4/", forge.Gitea: "api/v1/"}

// apiBase is the REST base as the clients take it, ending in /: the
// server's root alone (https://git.example.com) stands for its API there,
// and a missing final slash is added.
func apiBase(kind forge.Kind, api string) string {
	if !strings.HasSuffix(api, "/") {
		api += "/"
	}
	if p, ok := apiPaths[kind]; ok && !strings.HasSuffix(api, "/"+p) {
		api += p
	}
	return api
}

// urlHostPath is the host and the repository path (without .git) of an
// https, ssh or scp-like URL; "" for a local path.
func urlHostPath(raw string) (host, path string) {
	if localPath(raw) {
		return "", ""
	}
	if !strings.Contains(raw, "://") { // scp-like: [user@]host:path
		hostPart, p, _ := strings.Cut(raw, ":")
		if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
			hostPart = hostPart[at+1:]
		}
		host, path = hostPart, p
	} else if u, err := url.Parse(raw); err == nil {
		host, path = u.Hostname(), u.Path
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if !projectRE.MatchString(path) {
		path = ""
	}
	return host, path
}

// ForgeProject is repo's forge project with its API resolved; ok is false
// for a repository on no forge.
func (r *Repos) ForgeProject(repo Repo) (forge.Project, bool) {
	if repo.Forge == nil {
		return forge.Project{}, false
	}
	p := forge.Project{Kind: forge.Kind(repo.Forge.Type), Path: repo.Forge.Project, API: repo.Forge.API, TokenEnv: repo.Forge.TokenEnv}
	if p.API == "" {
		switch p.Kind {
		case forge.GitHub:
			p.API = r.cfg.GitHubAPI
		case forge.GitLab:
			p.API = r.cfg.GitLabAPI
		}
	}
	return p, true
}

// token is the value of the variable repo's forge names ("" if none).
func (r *Repos) token(repo Repo) string {
	if repo.Forge == nil {
		return ""
	}
	if t, ok := r.cfg.Tokens[repo.Forge.TokenEnv]; ok {
		return t
	}
	if repo.Forge.TokenEnv == DefaultTokenEnv[forge.GitHub] {
		return r.cfg.GitHubToken
	}
	return ""
}

// Forge is the client of the repository's forge, with its token; one per
// repository for the life of Repos, so what a client learns (GitLab
// commenters' access levels, GitHub's rate limit) outlives a poll.
func (r *Repos) Forge(name string) (forge.Client, error) {
	repo, err := r.repo(name)
	if err != nil {
		return nil, err
	}
	p, ok := r.ForgeProject(repo)
	if !ok {
		return nil, fmt.Errorf("%w for %s (it is on no forge h9 knows: set forge: in H9_REPOS_FILE)", ErrNoPullRequests, repo.Name)
	}
	if r.token(repo) == "" {
		return nil, fmt.Errorf("%w for %s (%s is not set)", ErrNoPullRequests, repo.Name, p.TokenEnv)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.forges[repo.Name]; c != nil {
		return c, nil
	}
	c, err := forge.New(p, r.token(repo), r.cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	if r.forges == nil {
		r.forges = map[string]forge.Client{}
	}
	r.forges[repo.Name] = c
	return c, nil
}

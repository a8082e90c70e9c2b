package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// loadRepos reads H9_REPOS and H9_REPOS_FILE into c.repos; both may be
// set, and a name defined twice (in either or across them) stops h9.
func (c *Config) loadRepos() error {
	list, err := gitrepo.ParseList(c.Repos)
	if err != nil {
		return invalid("H9_REPOS: %v", unwrapConfig(err))
	}
	if _, err := gitrepo.Check(list); err != nil {
		return invalid("H9_REPOS: %v", unwrapConfig(err))
	}
	var fromFile []gitrepo.Repo
	if c.ReposFile != "" {
		data, err := os.ReadFile(c.ReposFile)
		if err != nil {
			return invalid("H9_REPOS_FILE: cannot read %q: %v", c.ReposFile, errors.Unwrap(err))
		}
		if fromFile, err = gitrepo.ParseFile(data); err != nil {
			return invalid("H9_REPOS_FILE %q: %v", c.ReposFile, unwrapConfig(err))
		}
		if _, err := gitrepo.Check(fromFile); err != nil {
			return invalid("H9_REPOS_FILE %q: %v", c.ReposFile, unwrapConfig(err))
		}
	}
	all, err := gitrepo.Check(append(list, fromFile...))
	if err != nil {
		return invalid("H9_REPOS and H9_REPOS_FILE: %v", unwrapConfig(err))
	}
	for _, r := range all {
		if err := checkLocalRepo(r); err != nil {
			return err
		}
	}
	c.repos = all
	return nil
}

// checkLocalRepo: a repository given as a local path must exist now,
// rather than fail the first session's clone.
func checkLocalRepo(r gitrepo.Repo) error {
	path, isFile := strings.CutPrefix(r.URL, "file://")
	if !isFile && !filepath.IsAbs(path) && !strings.HasPrefix(path, "./") && !strings.HasPrefix(path, "../") {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return invalid("repository %q: %s does not exist (H9_REPOS or H9_REPOS_FILE): fix the path, or give a URL git can clone", r.Name, path)
	}
	return nil
}

// unwrapConfig drops the sentinel's words, which the variable's name says better.
func unwrapConfig(err error) string {
	return strings.TrimPrefix(err.Error(), gitrepo.ErrInvalidConfig.Error()+": ")
}

func checkGitAuthor(name, email string) error {
	switch {
	case strings.TrimSpace(name) == "" || strings.ContainsAny(name, "<>\n\r"):
		return invalid("H9_GIT_NAME must be a name without <, > or line breaks (got %q)", name)
	case strings.TrimSpace(email) == "" || strings.ContainsAny(email, "<>\n\r "):
		return invalid("H9_GIT_EMAIL must be an address without <, >, spaces or line breaks (got %q)", email)
	}
	return nil
}

// reposDir holds the repository caches, under H9_DATA_DIR (hidden from the sandbox).
const reposDir = "repos"

// newRepos is the configured repositories, with their checkouts made in
// ws (nil for h9 doctor, which makes none).
func (c Config) newRepos(ws *workspace.Manager) (*gitrepo.Repos, error) {
	return gitrepo.New(gitrepo.Config{
		Dir: filepath.Join(c.DataDir, reposDir), Workspaces: ws, Repos: c.repos,
		Author:      gitrepo.Identity{Name: c.GitName, Email: c.GitEmail},
		GitHubToken: c.GithubToken, GitHubAPI: c.GithubAPIUrl, GitLabAPI: c.GitlabAPIUrl, Tokens: c.forgeTokens,
		Spares:  ws != nil, // checkouts made ahead, for sessions to start without writing their tree
		Secrets: c.secrets,
	})
}

// forgeTokenNames are the variables holding forge tokens: the three
// defaults and every token_env of H9_REPOS_FILE, read before the
// configuration so they are hidden from h9's environment image at start.
var forgeTokenNames = sync.OnceValue(readForgeTokenNames)

func readForgeTokenNames() []string {
	names := []string{"H9_GITLAB_TOKEN", "H9_GITEA_TOKEN"} // H9_GITHUB_TOKEN is in secretEnvNames
	path := os.Getenv(envPrefix + "_REPOS_FILE")
	if path == "" {
		return names
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return names
	}
	repos, err := gitrepo.ParseFile(data)
	if err != nil {
		return names // the configuration refuses the file with its own line
	}
	for _, r := range repos {
		if r.Forge != nil && r.Forge.TokenEnv != "" && !slices.Contains(names, r.Forge.TokenEnv) {
			names = append(names, r.Forge.TokenEnv)
		}
	}
	return names
}

// loadForgeTokens reads the token of each repository's forge from the
// variable its token_env names (after loadRepos).
func (c *Config) loadForgeTokens() error {
	c.forgeTokens = map[string]string{"H9_GITHUB_TOKEN": c.GithubToken}
	for _, r := range c.repos {
		if r.Forge == nil {
			continue
		}
		env := r.Forge.TokenEnv
		if _, done := c.forgeTokens[env]; done {
			continue
		}
		v := os.Getenv(env)
		// An unset default token means "push branches only"; a token_env
		// the file names on purpose must be set, as secrets: are.
		if v == "" && !slices.Contains(slices.Collect(maps.Values(gitrepo.DefaultTokenEnv)), env) {
			return invalid("H9_REPOS_FILE: repository %q: forge.token_env names %s, which is not set: set it, or remove token_env", r.Name, env)
		}
		if err := checkSecretSpacing(env, v); err != nil {
			return err
		}
		c.forgeTokens[env] = v
	}
	return nil
}

// forgeSecrets are the forge tokens' values, for the scrubber.
func (c Config) forgeSecrets() []string {
	var out []string
	for _, v := range c.forgeTokens {
		out = append(out, v)
	}
	return out
}

// FollowConfig is the settings of following the requests h9 opened
// (ARCHITECTURE.md, "Following a request").
type FollowConfig struct {
	ForgePoll      time.Duration `split_words:"true" default:"60s" desc:"how often a followed pull/merge request is read for review feedback and failing checks (at least 10s)"`
	ForgeFollowFor time.Duration `split_words:"true" default:"720h" desc:"stop following a request nothing happened on for this long"`
}

// checkFollow validates the following settings, one line naming the one at fault.
func (c *Config) checkFollow() error {
	if err := atLeast("H9_FORGE_POLL", c.ForgePoll, bot.MinForgePoll); err != nil {
		return err
	}
	return atLeast("H9_FORGE_FOLLOW_FOR", c.ForgeFollowFor, c.ForgePoll)
}

// follow fills the bot's following from the settings: the repositories
// give the forge clients (nil repos: nothing to follow).
func (c FollowConfig) follow(bc *bot.Config, repos bot.Repos) {
	bc.ForgePoll, bc.ForgeFollowFor = c.ForgePoll, c.ForgeFollowFor
	if f, ok := repos.(bot.Forges); ok && repos != nil {
		bc.Forges = f
	}
}

// checkRepos asks each configured repository's remote for its branches
// (git ls-remote, with the credentials h9's fetches use) and, for one on
// GitHub, whether H9_GITHUB_TOKEN may push there (open pull requests).
// One line per repository.
func checkRepos(ctx context.Context, cfg Config) finding {
	if len(cfg.repos) == 0 {
		return ok("none configured: sessions start in an empty workspace (H9_REPOS, H9_REPOS_FILE)")
	}
	repos, err := cfg.newRepos(nil)
	if err != nil {
		return failed("check H9_DATA_DIR and that git is installed", "%v", err)
	}
	defer repos.Close()
	f := ok("%d configured", len(cfg.repos))
	for _, r := range cfg.repos {
		line, v := checkRepo(ctx, repos, r)
		f.verdict = max(f.verdict, v)
		f.more = append(f.more, v.mark()+" "+r.Name+": "+line)
	}
	switch f.verdict {
	case verdictFail:
		f.hint = "fix each ✗ below: the URL, the host's git credentials (ssh keys, credential helper) or the forge's token and its rights"
	case verdictWarn:
		f.hint = "set each forge's token (H9_GITHUB_TOKEN, H9_GITLAB_TOKEN, H9_GITEA_TOKEN or its token_env) to open requests"
	}
	return f
}

func checkRepo(ctx context.Context, repos *gitrepo.Repos, r gitrepo.Repo) (string, verdict) {
	n, err := repos.CheckRemote(ctx, r.Name)
	if err != nil {
		return oneLine(err), verdictFail
	}
	line := fmt.Sprintf("%s is reachable (%d %s)", gitrepo.Redact(r.URL), n, plural(n, "branch", "branches"))
	p, onForge := repos.ForgeProject(r)
	word := repos.RequestWord(r)
	switch {
	case !onForge:
		return line + "; on no forge h9 knows (set forge: to open requests): Push branch only", verdictOK
	case !forge.Supported(p.Kind):
		return line + fmt.Sprintf("; %s %ss are not supported yet: Push branch only", p.Kind.Title(), word), verdictWarn
	case !repos.CanOpenPullRequests(r):
		return line + fmt.Sprintf("; no %s: Push branch only, no Open %s", p.TokenEnv, word), verdictWarn
	}
	if err := repos.CheckAccess(ctx, r.Name); err != nil {
		return line + "; " + oneLine(err), verdictFail
	}
	return line + fmt.Sprintf("; the token may open %ss on %s (%s, %s; it may push)", word, p.Path, p.Kind.Title(), p.TokenEnv), verdictOK
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

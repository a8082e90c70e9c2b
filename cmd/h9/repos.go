package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
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
	c.repos = all
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

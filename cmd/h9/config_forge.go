package main

import (
	"os"
	"slices"
	"sync"

	"github.com/h9-app/h9/workspace/gitrepo"
)

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
		if r.Forge != nil {
			if _, done := c.forgeTokens[r.Forge.TokenEnv]; !done {
				c.forgeTokens[r.Forge.TokenEnv] = os.Getenv(r.Forge.TokenEnv)
			}
		}
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

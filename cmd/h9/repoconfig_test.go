package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepositorySettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: web\n    url: https://github.com/acme/web.git\n    branch: develop\n    setup: npm ci\n    channels: [C0WEB]\n"), 0o600)
	setEnv(t, "H9_REPOS", "backend=git@github.com:acme/backend.git", "H9_REPOS_FILE", file, "GITHUB_TOKEN", "ghp_not_ours")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.repos) != 2 || c.repos[0].Name != "backend" || c.repos[0].GitHub != "acme/backend" ||
		c.repos[1].Setup != "npm ci" || c.repos[1].Channels[0] != "C0WEB" || c.repos[1].GitHub != "acme/web" {
		t.Errorf("repos = %+v", c.repos)
	}
	if c.GithubToken != "" {
		t.Errorf("GITHUB_TOKEN (unprefixed, some CI's own) was read as H9_GITHUB_TOKEN")
	}
}

func TestRepositorySettingErrors(t *testing.T) {
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.yml")
	os.WriteFile(dup, []byte("repos:\n  - name: backend\n    url: /srv/b.git\n"), 0o600)
	typo := filepath.Join(dir, "typo.yml")
	os.WriteFile(typo, []byte("repos:\n  - name: x\n    uri: /srv/x.git\n"), 0o600)
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"not name=URL", []string{"H9_REPOS", "backend"}, `H9_REPOS: "backend" is not name=URL`},
		{"twice in H9_REPOS", []string{"H9_REPOS", "a=/x,a=/y"}, `H9_REPOS: repository "a" is defined twice`},
		{"in both", []string{"H9_REPOS", "backend=/x", "H9_REPOS_FILE", dup}, `H9_REPOS and H9_REPOS_FILE: repository "backend" is defined twice`},
		{"missing file", []string{"H9_REPOS_FILE", filepath.Join(dir, "nope.yml")}, "H9_REPOS_FILE: cannot read"},
		{"unknown key", []string{"H9_REPOS_FILE", typo}, `line 3: unknown key "uri" (did you mean "url"?)`},
		{"bad name", []string{"H9_REPOS", "my repo=/x"}, `the name must be`},
		{"option as URL", []string{"H9_REPOS", "a=--upload-pack=touch /tmp/x"}, `is not a repository URL`},
		{"API URL without slash", []string{"H9_GITHUB_API_URL", "https://ghe.example.com/api/v3"}, `H9_GITHUB_API_URL must end in / (got "https://ghe.example.com/api/v3")`},
		{"API URL not http", []string{"H9_GITHUB_API_URL", "ghe.example.com/"}, `H9_GITHUB_API_URL must be an http(s) URL`},
		{"GitLab API URL without slash", []string{"H9_GITLAB_API_URL", "https://gitlab.example.com/api/v4"}, `H9_GITLAB_API_URL must end in /`},
		{"git name", []string{"H9_GIT_NAME", "h9 <bot>"}, `H9_GIT_NAME must be a name`},
		{"git email", []string{"H9_GIT_EMAIL", ""}, `H9_GIT_EMAIL must be an address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env...)
			_, err := loadConfig()
			if !errors.Is(err, ErrInvalidSetting) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tt.want)
			}
		})
	}
}

package gitrepo

import (
	"strings"
	"testing"
)

// forge: defaults from the URL, the old github: key, and one clear error
// for each thing a repository entry can get wrong.
func TestForgeKey(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       ForgeConfig // Type "" = no forge
		err        string
	}{
		{"github from URL", "url: https://github.com/acme/r.git", ForgeConfig{Type: "github", Project: "acme/r", TokenEnv: "H9_GITHUB_TOKEN"}, ""},
		{"gitlab from scp URL", "url: git@gitlab.com:grp/sub/r.git", ForgeConfig{Type: "gitlab", Project: "grp/sub/r", TokenEnv: "H9_GITLAB_TOKEN"}, ""},
		{"old github key", "url: /tmp/x\n    github: acme/r", ForgeConfig{Type: "github", Project: "acme/r", TokenEnv: "H9_GITHUB_TOKEN"}, ""},
		{"unknown host, no forge", "url: https://git.example.com/a/b.git", ForgeConfig{}, ""},
		{"gitea self-hosted", "url: https://git.example.com/a/b.git\n    forge: {type: gitea, api: 'https://git.example.com/api/v1/', token_env: MY_TOKEN}",
			ForgeConfig{Type: "gitea", Project: "a/b", API: "https://git.example.com/api/v1/", TokenEnv: "MY_TOKEN"}, ""},
		{"self-managed gitlab", "url: https://gl.example.com/g/s/r.git\n    forge: {type: gitlab, api: 'https://gl.example.com/api/v4/'}",
			ForgeConfig{Type: "gitlab", Project: "g/s/r", API: "https://gl.example.com/api/v4/", TokenEnv: "H9_GITLAB_TOKEN"}, ""},
		{"type must say", "url: https://git.example.com/a/b.git\n    forge: {project: a/b}", ForgeConfig{}, "forge.type is required"},
		{"bad type", "url: https://github.com/a/b\n    forge: {type: bitbucket}", ForgeConfig{}, `forge.type "bitbucket" is not github, gitlab or gitea`},
		{"gitea needs api", "url: https://git.example.com/a/b.git\n    forge: {type: gitea}", ForgeConfig{}, "forge.api is required for gitea"},
		{"api gets its final slash", "url: https://github.com/a/b\n    forge: {api: 'https://ghe/api/v3'}",
			ForgeConfig{Type: "github", Project: "a/b", API: "https://ghe/api/v3/", TokenEnv: "H9_GITHUB_TOKEN"}, ""},
		{"gitea by its root", "url: https://git.example.com/a/b.git\n    forge: {type: gitea, api: 'https://git.example.com'}",
			ForgeConfig{Type: "gitea", Project: "a/b", API: "https://git.example.com/api/v1/", TokenEnv: "H9_GITEA_TOKEN"}, ""},
		{"gitea api without its slash", "url: https://git.example.com/a/b.git\n    forge: {type: gitea, api: 'https://git.example.com/sub/api/v1'}",
			ForgeConfig{Type: "gitea", Project: "a/b", API: "https://git.example.com/sub/api/v1/", TokenEnv: "H9_GITEA_TOKEN"}, ""},
		{"gitlab by its root", "url: https://gl.example.com/g/r.git\n    forge: {type: gitlab, api: 'https://gl.example.com/'}",
			ForgeConfig{Type: "gitlab", Project: "g/r", API: "https://gl.example.com/api/v4/", TokenEnv: "H9_GITLAB_TOKEN"}, ""},
		{"api with a password", "url: https://github.com/a/b\n    forge: {api: 'https://u:p@ghe/api/v3/'}", ForgeConfig{}, "without user or password"},
		{"bad token_env", "url: https://github.com/a/b\n    forge: {token_env: 'A-B'}", ForgeConfig{}, "not an environment variable name"},
		{"github project is owner/name", "url: /tmp/x\n    forge: {type: github, project: a/b/c}", ForgeConfig{}, `forge.project "a/b/c" is not owner/name`},
		{"no project for a path", "url: /tmp/x\n    forge: {type: gitlab}", ForgeConfig{}, "forge.project is required"},
		{"github and forge disagree", "url: /tmp/x\n    github: a/b\n    forge: {type: gitlab}", ForgeConfig{}, "disagree"},
	} {
		repos, err := ParseFile([]byte("repos:\n  - name: r\n    " + c.yaml + "\n"))
		if err == nil {
			repos, err = Check(repos)
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want.Type == "" && repos[0].Forge != nil:
			t.Errorf("%s: forge %+v, want none", c.name, *repos[0].Forge)
		case c.want.Type != "" && (repos[0].Forge == nil || *repos[0].Forge != c.want):
			t.Errorf("%s: forge %+v, want %+v", c.name, repos[0].Forge, c.want)
		}
	}
}

// One forge client per repository, made once: what it learns outlives a
// poll.
func TestForgeClientIsMadeOnce(t *testing.T) {
	r, err := New(Config{Dir: t.TempDir(), Author: Identity{Name: "h9", Email: "h9@localhost"},
		Repos:  []Repo{{Name: "gl", URL: "https://gitlab.example.com/g/s/r.git", Forge: &ForgeConfig{Type: "gitlab", API: "https://gitlab.example.com/api/v4/"}}},
		Tokens: map[string]string{"H9_GITLAB_TOKEN": "glpat-x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.Forge("gl")
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Forge("GL")
	if err != nil || again != first || first.Kind() != "gitlab" {
		t.Errorf("second client %v (%v), want the first", again, err)
	}
}

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/gitrepo"
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

// A variable a repository's forge names in token_env is a secret like
// h9's own: gone from the running h9's /proc/<pid>/environ, as are the
// default GitLab and Gitea tokens.
func TestBinaryHidesForgeTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	bare := bareRepo(t)
	yml := "repos:\n  - name: gl\n    url: " + bare + "\n    forge: {type: gitlab, project: grp/sub/r, token_env: MY_GL_TOKEN}\n"
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	const custom, gitlab, gitea = "glpat-custom-forge-token", "glpat-default-forge-token", "gitea-default-forge-token"
	e := newBinEnv(t, "H9_REPOS_FILE="+file, "MY_GL_TOKEN="+custom, "H9_GITLAB_TOKEN="+gitlab, "H9_GITEA_TOKEN="+gitea)
	e.start()
	environ, err := os.ReadFile(filepath.Join("/proc", itoa(e.cmd.Process.Pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(environ), "H9_REPOS_FILE=") {
		t.Fatalf("read the wrong environ: %q", environ)
	}
	for _, s := range []string{custom, gitlab, gitea, "MY_GL_TOKEN"} {
		if strings.Contains(string(environ), s) {
			t.Errorf("environ carries %s", s)
		}
	}
	e.stop()
}

// A forge: key h9 cannot use stops it at start with one line naming the
// file and the key.
func TestForgeKeyErrorsAtStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: g\n    url: https://git.example.com/a/b.git\n    forge: {type: gitea}\n"), 0o600)
	setEnv(t, "H9_REPOS_FILE", file)
	_, err := loadConfig()
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "H9_REPOS_FILE") || !strings.Contains(err.Error(), "forge.api is required for gitea") {
		t.Errorf("start-up error: %v", err)
	}
}

// A token_env the file names on purpose must be set, as secrets: and
// headers_env are; the default variable may be unset (push branches only).
func TestForgeTokenEnvUnsetStops(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: gl\n    url: https://gitlab.example.com/a/b.git\n    forge: {type: gitlab, project: a/b, token_env: H9_TEST_GL_UNSET}\n"), 0o600)
	setEnv(t, "H9_REPOS_FILE", file)
	unsetenv("H9_TEST_GL_UNSET")
	_, err := loadConfig()
	want := `H9_REPOS_FILE: repository "gl": forge.token_env names H9_TEST_GL_UNSET, which is not set: set it, or remove token_env`
	if !errors.Is(err, ErrInvalidSetting) || err.Error() != want {
		t.Errorf("start-up error: %v, want %q", err, want)
	}
	t.Setenv("H9_TEST_GL_UNSET", "glpat-secret ")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "H9_TEST_GL_UNSET has a space") {
		t.Errorf("a token with a trailing space: %v", err)
	}
	os.WriteFile(file, []byte("repos:\n  - name: gl\n    url: https://gitlab.example.com/a/b.git\n    forge: {type: gitlab, project: a/b}\n"), 0o600)
	if _, err := loadConfig(); err != nil {
		t.Errorf("the default H9_GITLAB_TOKEN unset: %v, want push branches only", err)
	}
}

// A follow_up that is not ask, auto or off stops h9 at start with one
// line naming the file and the value; a valid one reaches the repository.
func TestFollowUpKeyAtStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: b\n    url: https://github.com/acme/b.git\n    follow_up: sometimes\n"), 0o600)
	setEnv(t, "H9_REPOS_FILE", file)
	_, err := loadConfig()
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "H9_REPOS_FILE") || !strings.Contains(err.Error(), `follow_up "sometimes"`) {
		t.Errorf("start-up error: %v", err)
	}
	os.WriteFile(file, []byte("repos:\n  - name: b\n    url: https://github.com/acme/b.git\n    follow_up: auto\n"), 0o600)
	c, err := loadConfig()
	if err != nil || len(c.repos) != 1 || c.repos[0].FollowMode() != gitrepo.FollowAuto {
		t.Errorf("follow_up auto: %v, %+v", err, c.repos)
	}
}

// The bot gets the poll and the follow time, and the repositories as its
// forges.
func TestFollowSettingsReachTheBot(t *testing.T) {
	setEnv(t, "H9_FORGE_POLL", "15s", "H9_FORGE_FOLLOW_FOR", "48h")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	repos, err := c.newRepos(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repos.Close()
	var bc bot.Config
	c.FollowConfig.follow(&bc, repos)
	if bc.ForgePoll != 15*time.Second || bc.ForgeFollowFor != 48*time.Hour || bc.Forges == nil {
		t.Errorf("bot config: poll %s, follow for %s, forges %v", bc.ForgePoll, bc.ForgeFollowFor, bc.Forges)
	}
}

// bareRepo is a bare repository with one commit on main.
func bareRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	work, bare := filepath.Join(root, "w"), filepath.Join(root, "r.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", work, bare},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return bare
}

// h9 doctor reaches each repository (ls-remote) and checks the token's
// access on GitHub: one line each, a ✗ for an unreachable one, never the token.
func TestDoctorChecksRepositories(t *testing.T) {
	doctorEnv(t)
	good := bareRepo(t)
	gh := fakegithub.New("ghp_doctor_token")
	t.Cleanup(gh.Close)
	gh.AddRepo("acme/good", good, true)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: good\n    url: "+good+"\n    github: acme/good\n  - name: gone\n    url: http://127.0.0.1:1/missing.git\n"), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITHUB_TOKEN", "ghp_doctor_token")
	t.Setenv("H9_GITHUB_API_URL", gh.URL())
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with an unreachable repository")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "(1 branch)") || !strings.Contains(l, "may open pull requests on acme/good") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/gone"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "not reachable") {
		t.Errorf("gone: %q", l)
	}
	if l := lines["repositories"]; !strings.HasPrefix(l, "✗") {
		t.Errorf("repositories: %q", l)
	}

	t.Setenv("H9_GITHUB_TOKEN", "ghp_wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "401 Bad credentials") || strings.Contains(l, "ghp_wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

// h9 doctor checks a Gitea repository's token against the fake Gitea:
// accepted with every right, or the missing right or scope named, never
// the token.
func TestDoctorChecksGitea(t *testing.T) {
	doctorEnv(t)
	bare := bareRepo(t)
	gt := fakegitea.New("gt_doctor_token")
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/good", bare, true)
	gt.AddRepo("acme/ro", bare, false)
	entry := func(name, project string) string {
		return "  - name: " + name + "\n    url: " + bare + "\n    forge: {type: gitea, project: " + project + ", api: \"" + gt.URL() + "\"}\n"
	}
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n"+entry("good", "acme/good")+entry("ro", "acme/ro")), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITEA_TOKEN", "gt_doctor_token")
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with a token that cannot push to acme/ro")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "may open pull requests on acme/good (Gitea, H9_GITEA_TOKEN") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/ro"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "cannot push to acme/ro") {
		t.Errorf("read only: %q", l)
	}

	gt.SetScopes("write:repository", "read:issue", "read:user")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "lacks the scope write:issue") {
		t.Errorf("a token without write:issue: %q", l)
	}
	t.Setenv("H9_GITEA_TOKEN", "gt_wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "401") || !strings.Contains(l, "H9_GITEA_TOKEN") || strings.Contains(l, "gt_wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

// h9 doctor checks a GitLab repository through the fake GitLab: it is
// reachable over HTTP with the token (as oauth2), the token is accepted,
// the project exists and the token's user is a Developer; a Reporter, an
// unknown project and a refused token (git says so first) each get a ✗
// saying which.
func TestDoctorChecksGitLab(t *testing.T) {
	doctorEnv(t)
	gl := fakegitlab.New("glpat-doctor-token")
	t.Cleanup(gl.Close)
	for _, p := range []struct {
		path   string
		access int
	}{{"acme/team/good", fakegitlab.Developer}, {"acme/team/ro", fakegitlab.Reporter}} {
		bare := bareRepo(t)
		if out, err := exec.Command("git", "--git-dir="+bare, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		gl.AddProject(p.path, bare, p.access)
	}
	file := filepath.Join(t.TempDir(), "repos.yml")
	repo := func(name, project, cloned string) string {
		return "  - name: " + name + "\n    url: " + gl.GitURL(cloned) + "\n    forge: {type: gitlab, project: " + project + "}\n"
	}
	os.WriteFile(file, []byte("repos:\n"+repo("good", "acme/team/good", "acme/team/good")+repo("ro", "acme/team/ro", "acme/team/ro")+
		repo("lost", "acme/team/lost", "acme/team/good")), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITLAB_TOKEN", "glpat-doctor-token")
	t.Setenv("H9_GITLAB_API_URL", gl.URL())
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with a Reporter's repository")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "may open merge requests on acme/team/good (GitLab, H9_GITLAB_TOKEN") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/ro"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "Reporter access to acme/team/ro: it needs Developer or above") {
		t.Errorf("ro: %q", l)
	}
	if l := lines["repositories/lost"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "404 Project Not Found") {
		t.Errorf("lost: %q", l)
	}
	if len(gl.GitUsers()) == 0 {
		t.Error("git never authenticated to the fake GitLab: the test proves nothing")
	}
	for _, u := range gl.GitUsers() {
		if u != "oauth2" {
			t.Errorf("git reached GitLab as %q, want oauth2", u)
		}
	}

	t.Setenv("H9_GITLAB_TOKEN", "glpat-wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "Authentication failed") || strings.Contains(l, "glpat-wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

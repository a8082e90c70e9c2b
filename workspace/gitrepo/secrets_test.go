package gitrepo

import (
	"context"
	"errors"
	"github.com/h9-app/h9/workspace/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace"
)

// A repository's secret reaches its setup command only; every output
// shows [REDACTED:NAME] instead of the value, and the agent's commands do
// not have it in their environment (a file setup wrote, they can read).
func TestSecretsGoToSetupOnly(t *testing.T) {
	testenv.Need(t, "bwrap")
	const token = "npm_s3cr3t-value-0123456789"
	data := t.TempDir()
	secrets := []workspace.Secret{{Name: "NPM_TOKEN", Value: token}}
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(data, "workspaces"), Sandbox: "bwrap", Hidden: []string{data}, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	repo := Repo{Name: "app", URL: newRemote(t, map[string]string{"README": "x\n"}),
		Setup:   `echo "token is $NPM_TOKEN"; echo "//registry.test/:_authToken=$NPM_TOKEN" > .npmrc`,
		Secrets: []string{"NPM_TOKEN"}}
	repos, err := New(Config{Dir: filepath.Join(data, "repos"), Workspaces: wsm, Repos: []Repo{repo},
		Author: Identity{"h9", "h9@localhost"}, Secrets: map[string]string{"NPM_TOKEN": token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repos.Close)
	ctx := context.Background()
	s := Session{ID: "T1-C1-1.0001", Repo: "app", Branch: NewBranch("secrets")}
	if _, err := repos.Prepare(ctx, s); err != nil {
		t.Fatal(err)
	}
	res, ran, err := repos.Setup(ctx, s)
	if err != nil || !ran || res.ExitCode != 0 {
		t.Fatalf("setup: %v %v %s", ran, err, res)
	}
	if strings.Contains(res.Output, token) || !strings.Contains(res.Output, "token is [REDACTED:NPM_TOKEN]") {
		t.Errorf("setup output: %q", res.Output)
	}
	ws, err := wsm.Open(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	agent, err := ws.Bash(ctx, `echo "env:[$NPM_TOKEN]"; cat .npmrc`, workspace.BashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(agent.Output, "env:[]") || strings.Contains(agent.Output, token) || !strings.Contains(agent.Output, "[REDACTED:NPM_TOKEN]") {
		t.Errorf("agent command: %q", agent.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), ".npmrc")); !strings.Contains(string(b), token) {
		t.Errorf("setup did not get the value: .npmrc is %q", b)
	}
	if _, err := ws.Bash(ctx, "true", workspace.BashOptions{SetupEnv: secrets}); !errors.Is(err, workspace.ErrInvalidArgument) {
		t.Errorf("secrets outside setup: %v", err)
	}
	// The file is committed with the session's work: the diff h9 uploads
	// to the thread shows the name, not the value.
	if _, err := repos.Finish(ctx, s, "work", nil); err != nil {
		t.Fatal(err)
	}
	var diff strings.Builder
	if err := repos.Diff(ctx, s, &diff); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(diff.String(), token) || !strings.Contains(diff.String(), "_authToken=[REDACTED:NPM_TOKEN]") {
		t.Errorf("the diff shows:\n%s", diff.String())
	}
	// Nor does it go to the forge: the push is refused, naming the secret.
	if _, err := repos.Push(ctx, s); !errors.Is(err, ErrSecretInBranch) || !strings.Contains(err.Error(), "NPM_TOKEN") || strings.Contains(err.Error(), token) {
		t.Errorf("pushing a branch that holds the secret: %v", err)
	}
	if out := git(t, repo.URL, "branch", "--list", s.Branch); out != "" {
		t.Errorf("the branch reached the remote: %q", out)
	}
}

func TestSecretsConfig(t *testing.T) {
	if _, err := Check([]Repo{{Name: "a", URL: "/x", Secrets: []string{"NOT-A-NAME"}}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := Check([]Repo{{Name: "a", URL: "/x", Network: Network{Allow: []string{"http://x"}}}}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "network:") {
		t.Errorf("bad entry: %v", err)
	}
	if _, err := New(Config{Dir: t.TempDir(), Repos: []Repo{{Name: "a", URL: "/x", Secrets: []string{"UNSET_TOKEN"}}}, Author: Identity{"h9", "h9@x"}}); err == nil || !strings.Contains(err.Error(), "UNSET_TOKEN is not set") {
		t.Errorf("a secret without a value: %v", err)
	}
	got, err := ParseFile([]byte("repos:\n- name: a\n  url: /x\n  secrets: [NPM_TOKEN]\n  network:\n    allow: [example.com, '*.corp.test:8443']\n    presets: [packages]\n"))
	if err != nil || got[0].Network.Presets[0] != "packages" || got[0].Network.Allow[1] != "*.corp.test:8443" || got[0].Secrets[0] != "NPM_TOKEN" {
		t.Errorf("ParseFile: %+v %v", got, err)
	}
}

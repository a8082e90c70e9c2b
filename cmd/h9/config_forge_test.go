package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

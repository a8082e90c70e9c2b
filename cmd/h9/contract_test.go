package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A repository's channels are Slack channel IDs; short ones such as the
// test workspaces' C1 are IDs too.
func TestContractShortChannelIDs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: https://git.example.com/b.git\n    channels: [C1]\n"), 0o600)
	setEnv(t, "H9_REPOS_FILE", file)
	if _, err := loadConfig(); err != nil {
		t.Errorf("channels: [C1] refused: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace/gitrepo"
)

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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/bot/fakeslack"
)

// Each common first-hour mistake stops h9 with one line that names the
// setting and says what to do, exit 2 for a setting and 1 for an outage.
func TestStartupMistakes(t *testing.T) {
	slack := fakeslack.New(fakeslack.Options{BotToken: "xoxb-test", AppToken: "xapp-test"})
	t.Cleanup(slack.Close)
	reposFile := filepath.Join(t.TempDir(), "repos.yml")
	if err := os.WriteFile(reposFile, []byte("repos:\n  - name: api\n    repo: https://example.com/api.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  []string
		code int
		want []string
	}{
		{"bot token refused", []string{"SLACK_BOT_TOKEN=xoxb-wrong"}, exitConfig,
			[]string{"SLACK_BOT_TOKEN is not accepted by Slack (invalid_auth)", "OAuth & Permissions"}},
		{"app token refused", []string{"SLACK_APP_TOKEN=xapp-wrong"}, exitConfig,
			[]string{"SLACK_APP_TOKEN is not accepted by Slack (invalid_auth)", "connections:write"}},
		{"database down", []string{"H9_DATABASE_URL=postgres://h9:secret@127.0.0.1:1/h9"}, exitFailure,
			[]string{"H9_DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:1", "connection refused", "start it"}},
		{"repos file typo", []string{"H9_REPOS_FILE=" + reposFile}, exitConfig,
			[]string{"H9_REPOS_FILE", `line 3: unknown key "repo" (did you mean "url"?)`}},
		{"skills dir", []string{"H9_SKILLS_DIR=/nonexistent"}, exitConfig, []string{`H9_SKILLS_DIR="/nonexistent" is not a directory`}},
		{"template", []string{"H9_WORKSPACE_TEMPLATE=/nonexistent"}, exitConfig, []string{`H9_WORKSPACE_TEMPLATE="/nonexistent" is not a directory`}},
		{"data dir is a file", []string{"H9_DATA_DIR=" + reposFile}, exitConfig, []string{"H9_DATA_DIR", "is a file, not a directory"}},
		{"user names", []string{"H9_ALLOWED_USERS=alice,bob"}, exitConfig,
			[]string{`H9_ALLOWED_USERS: "alice" is not a Slack user ID`, "U012AB3CD", "Copy member ID"}},
		{"channel name", []string{"H9_ALLOWED_CHANNELS=#general"}, exitConfig,
			[]string{`H9_ALLOWED_CHANNELS: "#general" is not a Slack channel ID`, "C012AB3CD", "About"}},
		{"admin email", []string{"H9_ADMINS=alice@acme.com"}, exitConfig, []string{`H9_ADMINS: "alice@acme.com" is not a Slack user ID`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{
				"SLACK_BOT_TOKEN=xoxb-test", "SLACK_APP_TOKEN=xapp-test", "SLACK_API_URL=" + slack.APIURL(),
				"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "H9_DATA_DIR=" + filepath.Join(t.TempDir(), "data"), "H9_SANDBOX=none",
				"H9_LOG_LEVEL=error",
			}, c.env...)
			_, errOut, code := runH9(t, env)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "h9: ") {
				t.Errorf("last line %q is not h9's one-line error", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("last line %q lacks %q", last, w)
				}
			}
			if strings.Contains(errOut, "secret") {
				t.Errorf("the database password reached stderr: %s", errOut)
			}
		})
	}
}

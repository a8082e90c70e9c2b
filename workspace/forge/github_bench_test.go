package forge_test

import (
	"context"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
)

// One quiet followed pull request for an hour at H9_FORGE_POLL=60s (see
// quietHour), its head without any check (CI not yet registered, or none:
// its checks read every poll, issue 31) or with a finished one (read
// every 10th poll); the budget is ≤ 300 requests and ≥ 90 % 304s, and
// 304s cost no rate limit.
func BenchmarkGitHubQuietHour(b *testing.B) {
	for _, check := range []string{"none", "success"} {
		b.Run("check="+check, func(b *testing.B) {
			ctx := context.Background()
			bare, sha := bareWithBranch(b)
			gh := fakegithub.New("ghp_good")
			b.Cleanup(gh.Close)
			gh.AddRepo("acme/r", bare, true)
			c, err := forge.New(forge.Project{Kind: forge.GitHub, Path: "acme/r", API: gh.URL(), TokenEnv: "H9_GITHUB_TOKEN"}, "ghp_good", nil)
			if err != nil {
				b.Fatal(err)
			}
			pr, err := c.OpenRequest(ctx, "h9/x", "main", "t", "b")
			if err != nil {
				b.Fatal(err)
			}
			gh.AddComment("acme/r", pr.Number, "alice", "one comment before the hour")
			if check != "none" {
				gh.AddCheckRun("acme/r", sha, "build", "github-actions", check, "")
			}
			quietHour(b, c, pr.Number, sha)
		})
	}
}

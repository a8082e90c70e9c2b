package forge_test

import (
	"context"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo/fakegithub"
)

// One quiet followed pull request for an hour at H9_FORGE_POLL=60s: 60
// polls after the first. Reports the API requests per hour and the share
// answered 304 (free of GitHub's rate limit); the budget is
// ≤ 300 requests and ≥ 90 % 304s.
func BenchmarkGitHubQuietHour(b *testing.B) {
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
	var requests, cached int
	for i := 0; i < b.N; i++ {
		_, cur, err := c.Poll(ctx, pr.Number, sha, forge.Cursor{})
		if err != nil {
			b.Fatal(err)
		}
		requests, cached = 0, 0
		for range 60 {
			up, next, err := c.Poll(ctx, pr.Number, sha, cur)
			if err != nil {
				b.Fatal(err)
			}
			cur, requests, cached = next, requests+up.Requests, cached+up.Cached
		}
	}
	b.ReportMetric(float64(requests), "requests/hour")
	b.ReportMetric(100*float64(cached)/float64(requests), "%304")
}

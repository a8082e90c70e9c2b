package forge_test

import (
	"context"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
)

// One quiet followed pull request on Gitea for an hour at
// H9_FORGE_POLL=60s: 60 polls after the first, with a comment, an inline
// comment, a review and a check already there, finished (its statuses
// read every 10th poll) or still pending all hour (read every poll).
// Gitea's API serves no ETags, so every request counts; the issue's
// budget is ≤ 300 requests an hour.
func BenchmarkGiteaQuietHour(b *testing.B) {
	for _, state := range []string{"success", "pending"} {
		b.Run("check="+state, func(b *testing.B) { giteaQuietHour(b, state) })
	}
}

func giteaQuietHour(b *testing.B, checkState string) {
	ctx := context.Background()
	bare, sha := bareWithBranch(b)
	s := fakegitea.New("gt_good")
	b.Cleanup(s.Close)
	s.AddRepo("acme/r", bare, true)
	c := giteaClient(b, s, "acme/r", "gt_good")
	pr, err := c.OpenRequest(ctx, "h9/x", "main", "t", "b")
	if err != nil {
		b.Fatal(err)
	}
	s.AddComment("acme/r", pr.Number, "alice", "one comment before the hour")
	s.AddInline("acme/r", pr.Number, "alice", "a.go", 3, "@@", "and one inline", 0)
	s.AddReview("acme/r", pr.Number, "alice", "REQUEST_CHANGES", "and a review")
	s.AddStatus("acme/r", sha, "ci/build", checkState, "", "")
	var requests int
	for i := 0; i < b.N; i++ {
		_, cur, err := c.Poll(ctx, pr.Number, sha, forge.Cursor{})
		if err != nil {
			b.Fatal(err)
		}
		requests = 0
		for range 60 {
			up, next, err := c.Poll(ctx, pr.Number, sha, cur)
			if err != nil {
				b.Fatal(err)
			}
			if len(up.Feedback)+len(up.Failed) != 0 {
				b.Fatalf("a quiet poll found %+v", up)
			}
			cur, requests = next, requests+up.Requests
		}
	}
	b.ReportMetric(float64(requests), "requests/hour")
	b.ReportMetric(float64(requests)/60, "requests/poll")
}

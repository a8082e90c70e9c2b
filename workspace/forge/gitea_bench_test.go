package forge_test

import (
	"context"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegitea"
)

// One quiet followed pull request on Gitea for an hour at
// H9_FORGE_POLL=60s (see quietHour), with a comment, an inline comment, a
// change request and a check already there, finished (its statuses read
// every 10th poll) or pending all hour (read every poll), or none at all
// (read every poll until one appears, issue 31). Gitea's API
// serves no ETags, so every request counts; the budget is ≤ 300.
func BenchmarkGiteaQuietHour(b *testing.B) {
	for _, state := range []string{"none", "success", "pending"} {
		b.Run("check="+state, func(b *testing.B) {
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
			s.SetPermission("alice", "write")
			s.AddComment("acme/r", pr.Number, "alice", "one comment before the hour")
			s.AddInline("acme/r", pr.Number, "alice", "a.go", 3, "@@", "and one inline", 0)
			s.AddReview("acme/r", pr.Number, "alice", "REQUEST_CHANGES", "and a review")
			if state != "none" {
				s.AddStatus("acme/r", sha, "ci/build", state, "", "")
			}
			quietHour(b, c, pr.Number, sha)
		})
	}
}

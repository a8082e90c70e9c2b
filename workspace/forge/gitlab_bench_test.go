package forge_test

import (
	"context"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

// One quiet followed merge request for an hour at H9_FORGE_POLL=60s, as
// BenchmarkGitHubQuietHour does for GitHub: GitLab ignores If-None-Match,
// so every request counts against its rate limit; the budget is ≤ 300.
func BenchmarkGitLabQuietHour(b *testing.B) {
	ctx := context.Background()
	bare, sha := forgetest.Bare(b)
	gl := fakegitlab.New("glpat-good")
	b.Cleanup(gl.Close)
	gl.AddProject("acme/team/r", bare, fakegitlab.Developer)
	c, err := forge.New(forge.Project{Kind: forge.GitLab, Path: "acme/team/r", API: gl.URL(), TokenEnv: "H9_GITLAB_TOKEN"}, "glpat-good", nil)
	if err != nil {
		b.Fatal(err)
	}
	mr, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "b")
	if err != nil {
		b.Fatal(err)
	}
	gl.SetAccess("alice", fakegitlab.Developer)
	gl.AddNote("acme/team/r", mr.Number, "alice", "one comment before the hour")
	gl.AddDiffNote("acme/team/r", mr.Number, "alice", forgetest.File, forgetest.Line, "and one inline", "")
	pl := gl.AddPipeline("acme/team/r", sha, "failed")
	gl.AddJob("acme/team/r", pl, "build", "failed", "error: boom")
	quietHour(b, c, mr.Number, sha)
}

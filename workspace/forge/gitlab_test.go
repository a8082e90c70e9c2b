package forge_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

const glToken = "glpat-secret-token-123"

func gitLab(t *testing.T, access int) (*fakegitlab.Server, forge.Client, string) {
	t.Helper()
	bare, sha := forgetest.Bare(t)
	gl := fakegitlab.New(glToken)
	t.Cleanup(gl.Close)
	gl.AddProject("acme/team/r", bare, access)
	c, err := forge.New(forge.Project{Kind: forge.GitLab, Path: "acme/team/r", API: gl.URL(), TokenEnv: "H9_GITLAB_TOKEN"}, glToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	return gl, c, sha
}

// CheckAccess says which right is missing, in GitLab's words where GitLab
// gave them, and never the token.
func TestGitLabCheckAccessSaysWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(*fakegitlab.Server)
		want  []string
	}{
		{"reporter elsewhere, developer here", func(gl *fakegitlab.Server) { gl.SetAccess("h9-bot", fakegitlab.Reporter) }, nil},
		{"scope", func(gl *fakegitlab.Server) { gl.SetScopes("read_api", "read_repository") }, []string{"H9_GITLAB_TOKEN", "[read_api read_repository]", "needs api"}},
		{"merge requests off", func(gl *fakegitlab.Server) { gl.DisableMergeRequests("acme/team/r") }, []string{"merge requests are turned off on acme/team/r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gl, c, _ := gitLab(t, fakegitlab.Developer)
			tc.setup(gl)
			err := c.CheckAccess(ctx)
			if tc.want == nil {
				if err != nil {
					t.Errorf("a Developer through the project: %v", err)
				}
				return
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("CheckAccess: %v, want %q", err, w)
				}
			}
		})
	}
	_, c, _ := gitLab(t, fakegitlab.Reporter)
	if err := c.CheckAccess(ctx); err == nil || !strings.Contains(err.Error(), "@h9-bot with Reporter access to acme/team/r: it needs Developer or above") {
		t.Errorf("a Reporter: %v", err)
	}
	shared, c, _ := gitLab(t, fakegitlab.Reporter)
	shared.ShareWithGroup("acme/team/r", "h9-bot", fakegitlab.Maintainer)
	if err := c.CheckAccess(ctx); err != nil {
		t.Errorf("a Maintainer through a group the project is shared with: %v", err)
	}
	readOnly, c, _ := gitLab(t, fakegitlab.Developer)
	readOnly.SetScopes("read_api")
	if _, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "b"); err == nil ||
		!strings.Contains(err.Error(), "403 insufficient_scope: The request requires higher privileges than provided by the access token.") {
		t.Errorf("opening with a read_api token: %v", err)
	}
	gl, _, _ := gitLab(t, fakegitlab.Developer)
	unknown, _ := forge.New(forge.Project{Kind: forge.GitLab, Path: "acme/none", API: gl.URL(), TokenEnv: "H9_GITLAB_TOKEN"}, glToken, nil)
	if err := unknown.CheckAccess(ctx); err == nil || !strings.Contains(err.Error(), ": 404 Project Not Found (acme/none does not exist") || strings.Contains(err.Error(), glToken) {
		t.Errorf("an unknown project: %v", err)
	}
}

// A poll reads every page of discussions (a reply lands in an old
// thread), skips GitLab's system notes but a review's "requested
// changes", asks each author's access once,
// gives the hunk of the commented line from the merge request's diffs,
// and costs two requests when nothing happened.
func TestGitLabPollReadsDiscussions(t *testing.T) {
	ctx := context.Background()
	gl, c, sha := gitLab(t, fakegitlab.Developer)
	mr, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "b")
	if err != nil {
		t.Fatal(err)
	}
	gl.SetAccess("alice", fakegitlab.Maintainer)
	_, thread := gl.AddDiffNote("acme/team/r", mr.Number, "alice", forgetest.File, forgetest.Line, "rename this", "")
	for i := range 120 {
		gl.AddNote("acme/team/r", mr.Number, "alice", fmt.Sprintf("note %d", i))
	}
	gl.AddSystemNote("acme/team/r", mr.Number, "alice", "added 1 commit")
	up, cur, err := c.Poll(ctx, mr.Number, sha, forge.Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Feedback) != 121 {
		t.Fatalf("%d feedback, want 121", len(up.Feedback))
	}
	in := up.Feedback[0]
	if in.Kind != forge.Inline || in.Thread != thread || !in.CanPush || !strings.HasPrefix(in.Hunk, "@@ -9,") || !strings.HasSuffix(in.Hunk, "\n+func renamed() {}") {
		t.Errorf("inline %+v", in)
	}
	// The MR, two pages of discussions, h9's user, alice's access once, the diffs.
	if up.Requests != 6 {
		t.Errorf("the first poll made %d requests, want 6", up.Requests)
	}
	gl.AddDiffNote("acme/team/r", mr.Number, "alice", "", 0, "and the test too", thread) // a reply on page one
	up, cur, err = c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(up.Feedback) != 1 || up.Feedback[0].Body != "and the test too" || up.Feedback[0].Thread != thread || up.Feedback[0].Kind != forge.Inline {
		t.Fatalf("the reply in an old thread: %+v, %v", up.Feedback, err)
	}
	gl.AddReview("acme/team/r", mr.Number, "bob", "needs tests") // bob is no member
	up, cur, err = c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(up.Feedback) != 2 || up.Feedback[0].Kind != forge.Conversation || up.Feedback[0].Body != "needs tests" ||
		up.Feedback[1].Kind != forge.Review || up.Feedback[1].Author != "bob" || up.Feedback[0].CanPush || up.Feedback[1].CanPush {
		t.Fatalf("a review requesting changes: %+v, %v", up.Feedback, err)
	}
	quiet, _, err := c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(quiet.Feedback) != 0 || quiet.Requests != 3 {
		t.Errorf("a quiet poll of 121 notes: %+v, %v; want 3 requests (the MR, two pages)", quiet, err)
	}
}

// Failed jobs of the head pipeline, once each: allowed failures and
// other commits' pipelines are not checks to fix; an erased trace says
// so; terminal colours and section markers are gone from the log; a
// re-run that fails again brings its new job; a pipeline failed with no
// failed job of its own is one check.
func TestGitLabPollFailedJobs(t *testing.T) {
	ctx := context.Background()
	gl, c, sha := gitLab(t, fakegitlab.Developer)
	mr, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "b")
	if err != nil {
		t.Fatal(err)
	}
	other := gl.AddPipeline("acme/team/r", "0000000000000000000000000000000000000000", "failed")
	gl.AddJob("acme/team/r", other, "elsewhere", "failed", "x")
	pl := gl.AddPipeline("acme/team/r", sha, "failed")
	gl.AddJob("acme/team/r", pl, "build", "failed", "section_start:1:build\r\x1b[0K\x1b[31merror: boom\x1b[0m\nsection_end:1:build\r\x1b[0K")
	gl.AddJob("acme/team/r", pl, "docs", "failed", "")
	up, cur, err := c.Poll(ctx, mr.Number, sha, forge.Cursor{})
	if err != nil || len(up.Failed) != 2 {
		t.Fatalf("failed: %+v, %v", up.Failed, err)
	}
	byName := map[string]forge.Check{}
	for _, ch := range up.Failed {
		byName[ch.Name] = ch
	}
	if b := byName["build"]; b.State != "script_failure" || strings.TrimSpace(b.Log) != "error: boom" || !strings.Contains(b.URL, "/-/jobs/") {
		t.Errorf("build %+v", b)
	}
	if d := byName["docs"]; !strings.Contains(d.Log, "GitLab served no log") {
		t.Errorf("docs %+v", d)
	}
	up, cur, err = c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(up.Failed) != 0 || up.Requests != 2 {
		t.Errorf("the same pipeline again: %+v, %v", up, err)
	}
	rerun := gl.AddPipeline("acme/team/r", sha, "failed")
	gl.AddJob("acme/team/r", rerun, "build", "failed", "again")
	up, cur, err = c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(up.Failed) != 1 || up.Failed[0].Log != "again" {
		t.Errorf("the re-run: %+v, %v", up.Failed, err)
	}
	downstream := gl.AddPipeline("acme/team/r", sha, "failed") // failed by a child pipeline: no failed job of its own
	gl.AddJob("acme/team/r", downstream, "lint", "success", "ok")
	up, _, err = c.Poll(ctx, mr.Number, sha, cur)
	if err != nil || len(up.Failed) != 1 || up.Failed[0].Name != "pipeline" || !strings.Contains(up.Failed[0].Log, "downstream") || !strings.Contains(up.Failed[0].URL, "/-/pipelines/") {
		t.Errorf("a pipeline failed without a failed job: %+v, %v", up.Failed, err)
	}
}

// raceTransport runs before once, ahead of the first POST it carries.
type raceTransport struct {
	before func()
	once   *sync.Once
}

func (r raceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		r.once.Do(r.before)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// Another replica opens the merge request between h9's look and its
// create: GitLab's 409 leads to the one that is open, brought up to date.
func TestGitLabOpenRequestRacesAnotherReplica(t *testing.T) {
	ctx := context.Background()
	gl, other, _ := gitLab(t, fakegitlab.Developer)
	p := forge.Project{Kind: forge.GitLab, Path: "acme/team/r", API: gl.URL(), TokenEnv: "H9_GITLAB_TOKEN"}
	hc := &http.Client{Transport: raceTransport{once: &sync.Once{}, before: func() {
		if _, err := other.OpenRequest(ctx, forgetest.Branch, "main", "t", "the other replica's body"); err != nil {
			t.Error(err)
		}
	}}}
	c, err := forge.New(p, glToken, hc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "mine")
	mrs := gl.MergeRequests("acme/team/r")
	if err != nil || !r.Reused || r.Number != 1 || len(mrs) != 1 || mrs[0].Description != "mine" {
		t.Errorf("after the race: %+v, %v; merge requests %+v", r, err, mrs)
	}
	var conflicts int
	for _, req := range gl.Requests() {
		if req.Status == http.StatusConflict {
			conflicts++
		}
	}
	if conflicts != 1 {
		t.Errorf("%d 409s, want the race to have happened once", conflicts)
	}
}

// A merged results pipeline runs on a merge commit, not on h9's: its
// failed jobs are still the head's while the merge request's head is h9's
// commit.
func TestGitLabMergedResultsPipeline(t *testing.T) {
	ctx := context.Background()
	gl, c, sha := gitLab(t, fakegitlab.Developer)
	mr, err := c.OpenRequest(ctx, forgetest.Branch, "main", "t", "b")
	if err != nil {
		t.Fatal(err)
	}
	pl := gl.AddMergedResultsPipeline("acme/team/r", mr.Number, "1111111111111111111111111111111111111111", "failed")
	gl.AddJob("acme/team/r", pl, "test", "failed", "FAIL: TestX")
	up, _, err := c.Poll(ctx, mr.Number, sha, forge.Cursor{})
	if err != nil || len(up.Failed) != 1 || up.Failed[0].Log != "FAIL: TestX" {
		t.Errorf("merged results: %+v, %v", up.Failed, err)
	}
	up, _, err = c.Poll(ctx, mr.Number, "2222222222222222222222222222222222222222", forge.Cursor{})
	if err != nil || len(up.Failed) != 0 {
		t.Errorf("h9 pushed another head since: %+v, %v", up.Failed, err)
	}
}

package fakegithub

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v75/github"
)

// The official client reads the fake as it reads GitHub: pages through
// Link headers, a 304 for a repeated ETag, a job log behind a redirect,
// a collaborator's permission and role.
func TestGoGitHubReadsTheFake(t *testing.T) {
	ctx := context.Background()
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", t.TempDir(), true)
	s.with("acme/r", func(r *repo) { r.pulls = append(r.pulls, &Pull{Number: 1, Head: "h9/x", Base: "main", State: "open"}) })
	for i := 0; i < 5; i++ {
		s.AddComment("acme/r", 1, "alice", "c")
	}
	gh := github.NewClient(nil).WithAuthToken("tok")
	gh.BaseURL, _ = url.Parse(s.URL())
	var all []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	for {
		page, resp, err := gh.Issues.ListComments(ctx, "acme", "r", 1, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(all) != 5 || all[0].GetUser().GetLogin() != "alice" {
		t.Errorf("paged %d comments", len(all))
	}

	req, _ := gh.NewRequest(http.MethodGet, "repos/acme/r/pulls/1", nil)
	resp, err := gh.Do(ctx, req, nil)
	if err != nil || resp.Header.Get("ETag") == "" {
		t.Fatalf("pull: %v, etag %q", err, resp.Header.Get("ETag"))
	}
	req, _ = gh.NewRequest(http.MethodGet, "repos/acme/r/pulls/1", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	if resp, _ := gh.Do(ctx, req, nil); resp == nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("repeated ETag: %v, want 304", resp)
	}

	id := s.AddCheckRun("acme/r", "abc", "build", "github-actions", "failure", "boom\n")
	u, _, err := gh.Actions.GetWorkflowJobLogs(ctx, "acme", "r", id, 0)
	if err != nil || u == nil {
		t.Fatalf("job logs: %v", err)
	}
	runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, "acme", "r", "abc", nil)
	if err != nil || runs.GetTotal() != 1 || runs.CheckRuns[0].GetConclusion() != "failure" || runs.CheckRuns[0].GetApp().GetSlug() != "github-actions" {
		t.Errorf("check runs: %+v, %v", runs, err)
	}

	s.SetPermission("mia", "maintain")
	level, _, err := gh.Repositories.GetPermissionLevel(ctx, "acme", "r", "mia")
	if err != nil || level.GetPermission() != "write" || level.GetRoleName() != "maintain" {
		t.Errorf("permission: %+v, %v", level, err)
	}
	if me, _, err := gh.Users.Get(ctx, ""); err != nil || me.GetLogin() != s.Login() {
		t.Errorf("user: %+v, %v", me, err)
	}
}

// The official client reads the fake's issues as GitHub's: the
// repository's issue events newest first, each with its issue, label,
// assignee and actor; an issue; a comment on it; a branch's head.
func TestGoGitHubReadsIssues(t *testing.T) {
	ctx := context.Background()
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", t.TempDir(), true)
	n := s.AddIssue("acme/r", "carol", "A bug", "it breaks")
	s.Label("acme/r", n, "h9", "alice")
	s.Assign("acme/r", n, "h9-bot", "bob")
	s.CloseIssue("acme/r", n, "alice")
	gh := github.NewClient(nil).WithAuthToken("tok")
	gh.BaseURL, _ = url.Parse(s.URL())
	events, _, err := gh.Issues.ListRepositoryEvents(ctx, "acme", "r", nil)
	if err != nil || len(events) != 3 {
		t.Fatalf("events: %d, %v", len(events), err)
	}
	closed, assigned, labeled := events[0], events[1], events[2]
	if closed.GetEvent() != "closed" || assigned.GetAssignee().GetLogin() != "h9-bot" || assigned.GetActor().GetLogin() != "bob" ||
		labeled.GetLabel().GetName() != "h9" || labeled.GetIssue().GetNumber() != n || labeled.GetIssue().IsPullRequest() {
		t.Errorf("events newest first: %v %v %v", closed, assigned, labeled)
	}
	is, _, err := gh.Issues.Get(ctx, "acme", "r", n)
	if err != nil || is.GetState() != "closed" || is.GetBody() != "it breaks" {
		t.Errorf("issue: %+v, %v", is, err)
	}
	if _, _, err := gh.Issues.CreateComment(ctx, "acme", "r", n, &github.IssueComment{Body: github.Ptr("on it")}); err != nil {
		t.Fatal(err)
	}
	if w := s.Written("acme/r", n); len(w) != 1 || w[0].Body != "on it" {
		t.Errorf("written: %+v", w)
	}
	// The issue's comments: counted on the issue, listed oldest first and
	// paged, each with its author and a link to the issue.
	s.AddComment("acme/r", n, "dave", "me too")
	if is, _, err := gh.Issues.Get(ctx, "acme", "r", n); err != nil || is.GetComments() != 2 {
		t.Errorf("comment count: %+v, %v", is, err)
	}
	cs, resp, err := gh.Issues.ListComments(ctx, "acme", "r", n, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 1, Page: 2}})
	if err != nil || len(cs) != 1 || cs[0].GetBody() != "me too" || cs[0].GetUser().GetLogin() != "dave" ||
		!strings.Contains(cs[0].GetHTMLURL(), "/issues/") || resp.NextPage != 0 {
		t.Errorf("the comments' second page: %+v, %v", cs, err)
	}
	if _, resp, err := gh.Repositories.GetBranch(ctx, "acme", "r", "nope", 0); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing branch: %v", err)
	}
}

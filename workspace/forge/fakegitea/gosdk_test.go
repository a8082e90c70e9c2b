package fakegitea

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// bare is a bare repository with main and h9/x one commit ahead.
func bare(t *testing.T) string {
	t.Helper()
	work, dir := t.TempDir(), filepath.Join(t.TempDir(), "r.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "first"},
		{"checkout", "-q", "-b", "h9/x"}, {"commit", "-q", "--allow-empty", "-m", "second"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", "--bare", work, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	return dir
}

// The official SDK talks to the fake as to Gitea: it reads the version
// first, opens, finds and edits pull requests, pages through Link
// headers, reads Gitea's error messages and statuses, reviews and their
// comments, comments since a time, permissions and the token's user.
func TestGiteaSDKReadsTheFake(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", bare(t), true)
	c, err := sdk.NewClient(s.WebURL(), sdk.SetToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := c.ServerVersion(); err != nil || v != Version {
		t.Fatalf("version %q, %v", v, err)
	}
	pr, _, err := c.CreatePullRequest("acme", "r", sdk.CreatePullRequestOption{Head: "h9/x", Base: "main", Title: "t", Body: "b"})
	if err != nil || pr.Index != 1 || pr.Head.Sha == "" || pr.Head.Ref != "h9/x" {
		t.Fatalf("create: %+v, %v", pr, err)
	}
	_, resp, err := c.CreatePullRequest("acme", "r", sdk.CreatePullRequestOption{Head: "h9/x", Base: "main", Title: "t"})
	if err == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "pull request already exists for these targets") {
		t.Errorf("second pull request: %v, %v", resp, err)
	}
	body := "new body"
	if pr, _, err := c.EditPullRequest("acme", "r", 1, sdk.EditPullRequestOption{Body: &body}); err != nil || pr.Body != body {
		t.Errorf("edit: %+v, %v", pr, err)
	}
	if _, resp, err := c.GetRepo("acme", "none"); err == nil || resp.StatusCode != http.StatusNotFound || err.Error() != "repository does not exist" {
		t.Errorf("missing repository: %v", err)
	}

	for i := 0; i < 5; i++ {
		s.AddReview("acme/r", 1, "alice", "COMMENT", "c")
	}
	var all []*sdk.PullReview
	opt := sdk.ListPullReviewsOptions{ListOptions: sdk.ListOptions{Page: 1, PageSize: 2}}
	for {
		page, resp, err := c.ListPullReviews("acme", "r", 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("X-Total-Count") != "5" {
			t.Errorf("X-Total-Count %q", resp.Header.Get("X-Total-Count"))
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if len(all) != 5 || all[0].Reviewer.UserName != "alice" || all[0].State != sdk.ReviewStateComment {
		t.Errorf("paged %d reviews", len(all))
	}

	id := s.AddInline("acme/r", 1, "alice", "a.go", 3, "@@ -1 +1 @@", "why?", 0)
	reply := s.AddInline("acme/r", 1, "bob", "", 0, "", "agreed", id)
	rc := s.ReviewComments("acme/r", 1)
	comments, _, err := c.ListPullReviewComments("acme", "r", 1, rc[0].ReviewID)
	if err != nil || len(comments) != 2 || comments[1].ID != reply || comments[1].Path != "a.go" || comments[1].LineNum != 3 || comments[0].DiffHunk == "" {
		t.Errorf("review comments: %+v, %v", comments, err)
	}
	if _, _, err := c.CreatePullReview("acme", "r", 1, sdk.CreatePullReviewOptions{State: sdk.ReviewStateComment,
		Comments: []sdk.CreatePullReviewComment{{Path: "a.go", Body: "done", NewLineNum: 3}}}); err != nil {
		t.Errorf("review with a comment: %v", err)
	}

	s.AddComment("acme/r", 1, "alice", "first")
	cm, _, err := c.CreateIssueComment("acme", "r", 1, sdk.CreateIssueCommentOption{Body: "second"})
	if err != nil || cm.Poster.UserName != s.Login() {
		t.Fatalf("comment: %+v, %v", cm, err)
	}
	since, _, err := c.ListIssueComments("acme", "r", 1, sdk.ListIssueCommentOptions{Since: cm.Updated})
	if err != nil || len(since) != 1 || since[0].Body != "second" {
		t.Errorf("comments since the second: %+v, %v", since, err)
	}

	s.AddStatus("acme/r", pr.Head.Sha, "ci", "pending", "", "")
	s.AddStatus("acme/r", pr.Head.Sha, "ci", "failure", "boom", "https://ci.example/1")
	st, _, err := c.GetCombinedStatus("acme", "r", pr.Head.Sha)
	if err != nil || st.State != sdk.StatusFailure || len(st.Statuses) != 1 || st.Statuses[0].Description != "boom" || st.Statuses[0].TargetURL == "" {
		t.Errorf("combined status: %+v, %v", st, err)
	}

	s.SetPermission("mia", "write")
	if _, resp, err := c.CollaboratorPermission("acme", "r", "mia"); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("another's permission, asked by a non-admin: %v, want 403", err)
	}
	if perm, _, err := c.CollaboratorPermission("acme", "r", s.Login()); err != nil || perm.Permission != sdk.AccessModeWrite {
		t.Errorf("one's own permission: %+v, %v", perm, err)
	}
	assignees, _, err := c.GetAssignees("acme", "r")
	var names []string
	for _, u := range assignees {
		names = append(names, u.UserName)
	}
	if err != nil || strings.Join(names, ",") != "acme,"+s.Login()+",mia" {
		t.Errorf("assignees %v, %v; want the owner, the token's user and mia (write), not alice (read)", names, err)
	}
	s.SetAdmin("acme/r")
	for login, want := range map[string]sdk.AccessMode{"mia": sdk.AccessModeWrite, "alice": sdk.AccessModeRead, "acme": sdk.AccessModeOwner} {
		if perm, _, err := c.CollaboratorPermission("acme", "r", login); err != nil || perm.Permission != want {
			t.Errorf("%s's permission: %+v, %v, want %s", login, perm, err, want)
		}
	}
	if _, resp, err := c.CollaboratorPermission("acme", "r", "nobody"); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown user's permission: %v", err)
	}
	if me, _, err := c.GetMyUserInfo(); err != nil || me.UserName != s.Login() {
		t.Errorf("user: %+v, %v", me, err)
	}

	s.ClosePull("acme/r", 1, "carol")
	events, _, err := c.ListIssueTimeline("acme", "r", 1, sdk.ListIssueCommentOptions{Since: time.Time{}})
	if err != nil || len(events) == 0 || events[len(events)-1].Type != "close" || events[len(events)-1].Poster.UserName != "carol" {
		t.Errorf("timeline: %+v, %v", events, err)
	}
}

// Scopes: a token without write:repository is refused a write with 403
// before its body is read; one with it gets 422 for an empty body.
func TestGiteaSDKScopes(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", bare(t), true)
	s.SetScopes("read:repository")
	c, err := sdk.NewClient(s.WebURL(), sdk.SetToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetRepo("acme", "r"); err != nil {
		t.Errorf("read with read:repository: %v", err)
	}
	_, resp, err := c.CreatePullRequest("acme", "r", sdk.CreatePullRequestOption{Head: "h9/x", Base: "main", Title: "t"})
	if err == nil || resp.StatusCode != http.StatusForbidden || !strings.Contains(err.Error(), "write:repository") {
		t.Errorf("write without write:repository: %v", err)
	}
	if _, resp, err := c.GetMyUserInfo(); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("user without read:user: %v", err)
	}
	bad, err := sdk.NewClient(s.WebURL(), sdk.SetToken("wrong"))
	if err != nil {
		t.Fatal(err) // the version is served without a token
	}
	if _, resp, err := bad.GetRepo("acme", "r"); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %v", err)
	}
}

// The official SDK reads the fake's issues as Gitea's: listed by label,
// assignee and state; one issue; a comment on it; the combined status of
// a branch (its slash escaped), which names the branch's head.
func TestGiteaSDKReadsIssues(t *testing.T) {
	s := New("tok")
	defer s.Close()
	dir := bare(t)
	s.AddRepo("acme/r", dir, true)
	n := s.AddIssue("acme/r", "carol", "A bug", "it breaks")
	s.Label("acme/r", n, "h9", "alice")
	other := s.AddIssue("acme/r", "carol", "Another", "")
	s.Assign("acme/r", other, "h9-bot", "bob")
	s.CloseIssue("acme/r", other, "bob")
	c, err := sdk.NewClient(s.WebURL(), sdk.SetToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := c.ListRepoIssues("acme", "r", sdk.ListIssueOption{Labels: []string{"h9"}, Type: sdk.IssueTypeIssue, State: sdk.StateAll})
	if err != nil || len(list) != 1 || list[0].Index != int64(n) || list[0].Labels[0].Name != "h9" {
		t.Errorf("by label: %+v, %v", list, err)
	}
	list, _, err = c.ListRepoIssues("acme", "r", sdk.ListIssueOption{AssignedBy: "h9-bot", Type: sdk.IssueTypeIssue})
	if err != nil || len(list) != 0 {
		t.Errorf("assigned, open only (the default): %+v, %v", list, err)
	}
	list, _, err = c.ListRepoIssues("acme", "r", sdk.ListIssueOption{AssignedBy: "h9-bot", Type: sdk.IssueTypeIssue, State: sdk.StateAll})
	if err != nil || len(list) != 1 || list[0].Index != int64(other) || list[0].State != sdk.StateClosed {
		t.Errorf("assigned, all: %+v, %v", list, err)
	}
	if is, _, err := c.GetIssue("acme", "r", int64(n)); err != nil || is.Title != "A bug" || is.PullRequest != nil {
		t.Errorf("issue: %+v, %v", is, err)
	}
	if _, _, err := c.CreateIssueComment("acme", "r", int64(n), sdk.CreateIssueCommentOption{Body: "on it"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Comments("acme/r", n); len(got) != 1 || got[0].Body != "on it" {
		t.Errorf("comments: %+v", got)
	}
	// An issue's comments: counted on the issue, listed all at once,
	// oldest first, each with its poster.
	s.AddComment("acme/r", n, "dave", "me too")
	if is, _, err := c.GetIssue("acme", "r", int64(n)); err != nil || is.Comments != 2 {
		t.Errorf("comment count: %+v, %v", is, err)
	}
	if cs, _, err := c.ListIssueComments("acme", "r", int64(n), sdk.ListIssueCommentOptions{}); err != nil || len(cs) != 2 ||
		cs[0].Body != "on it" || cs[1].Body != "me too" || cs[1].Poster == nil || cs[1].Poster.UserName != "dave" {
		t.Errorf("issue comments: %+v, %v", cs, err)
	}
	out, err := exec.Command("git", "--git-dir="+dir, "rev-parse", "h9/x").Output()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(string(out))
	s.AddStatus("acme/r", head, "ci/build", "failure", "boom", "")
	combined, _, err := c.GetCombinedStatus("acme", "r", "h9/x")
	if err != nil || combined.SHA != head || len(combined.Statuses) != 1 {
		t.Errorf("combined status of h9/x: %+v, %v", combined, err)
	}
}

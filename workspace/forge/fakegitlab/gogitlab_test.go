package fakegitlab

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/oauth2"
)

// bare is a bare repository with main and h9/x one commit ahead.
func bare(t *testing.T) string {
	t.Helper()
	work, dir := t.TempDir(), filepath.Join(t.TempDir(), "r.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"},
		{"-C", work, "checkout", "-q", "-b", "h9/x"},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "second"},
		{"clone", "-q", "--bare", work, dir},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func client(t *testing.T, s *Server, token string) *gitlab.Client {
	t.Helper()
	gl, err := gitlab.NewClient(token, gitlab.WithBaseURL(s.URL()), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	return gl
}

// The official client drives the fake as it drives GitLab: a project by
// its URL-encoded path, a merge request created, found by source branch
// and refused a second time with 409; notes paged with X-Next-Page and
// Link; a member's access level; a failed job and its trace.
func TestGitLabClientDrivesTheFake(t *testing.T) {
	s := New("glpat-tok")
	defer s.Close()
	s.AddProject("acme/team/r", bare(t), Developer)
	gl := client(t, s, "glpat-tok")

	p, _, err := gl.Projects.GetProject("acme/team/r", nil)
	if err != nil || p.PathWithNamespace != "acme/team/r" || p.Permissions.ProjectAccess.AccessLevel != gitlab.DeveloperPermissions {
		t.Fatalf("project: %+v, %v", p, err)
	}
	if got := s.Requests()[0].Path; got != "/api/v4/projects/acme%2Fteam%2Fr" {
		t.Errorf("the project travelled as %q, want it URL-encoded", got)
	}
	opt := &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("t"), SourceBranch: gitlab.Ptr("h9/x"), TargetBranch: gitlab.Ptr("main")}
	mr, _, err := gl.MergeRequests.CreateMergeRequest(p.ID, opt) // by numeric id this time
	if err != nil || mr.IID != 1 || mr.State != "opened" || mr.SHA == "" {
		t.Fatalf("create: %+v, %v", mr, err)
	}
	_, resp, err := gl.MergeRequests.CreateMergeRequest("acme/team/r", opt)
	var er *gitlab.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != http.StatusConflict || !strings.Contains(er.Message, "Another open merge request already exists for this source branch: !1") {
		t.Errorf("a second merge request: %v", err)
	}
	found, _, err := gl.MergeRequests.ListProjectMergeRequests("acme/team/r", &gitlab.ListProjectMergeRequestsOptions{State: gitlab.Ptr("opened"), SourceBranch: gitlab.Ptr("h9/x")})
	if err != nil || len(found) != 1 || found[0].IID != 1 {
		t.Errorf("list by source branch: %+v, %v", found, err)
	}

	for range 5 {
		s.AddNote("acme/team/r", 1, "alice", "n")
	}
	s.AddSystemNote("acme/team/r", 1, "alice", "added 1 commit")
	var notes []*gitlab.Note
	lopt := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 2}}
	for {
		page, resp, err := gl.Notes.ListMergeRequestNotes("acme/team/r", 1, lopt)
		if err != nil {
			t.Fatal(err)
		}
		notes = append(notes, page...)
		if resp.TotalItems != 6 || resp.TotalPages != 3 || (resp.NextPage != 0) != (resp.NextLink != "") {
			t.Errorf("page %d: total %d in %d pages, next %d / %q", resp.CurrentPage, resp.TotalItems, resp.TotalPages, resp.NextPage, resp.NextLink)
		}
		if resp.NextPage == 0 {
			break
		}
		lopt.Page = resp.NextPage
	}
	if len(notes) != 6 || !notes[0].System || notes[5].Author.Username != "alice" {
		t.Errorf("paged %d notes, newest first: %+v", len(notes), notes)
	}

	s.SetAccess("alice", Maintainer)
	alice := notes[5].Author.ID
	m, _, err := gl.ProjectMembers.GetInheritedProjectMember("acme/team/r", alice)
	if err != nil || m.AccessLevel != gitlab.MaintainerPermissions {
		t.Errorf("alice's membership: %+v, %v", m, err)
	}
	pl := s.AddPipeline("acme/team/r", mr.SHA, "failed")
	s.AddJob("acme/team/r", pl, "lint", "success", "ok")
	job := s.AddJob("acme/team/r", pl, "build", "failed", "compiling\nerror: x\n")
	jobs, _, err := gl.Jobs.ListPipelineJobs("acme/team/r", pl, &gitlab.ListJobsOptions{Scope: &[]gitlab.BuildStateValue{gitlab.Failed}})
	if err != nil || len(jobs) != 1 || jobs[0].ID != job || jobs[0].FailureReason != "script_failure" {
		t.Fatalf("failed jobs: %+v, %v", jobs, err)
	}
	trace, _, err := gl.Jobs.GetTraceFile("acme/team/r", job)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := io.ReadAll(trace); string(data) != "compiling\nerror: x\n" {
		t.Errorf("trace %q", data)
	}
	got, _, err := gl.MergeRequests.GetMergeRequest("acme/team/r", 1, nil)
	if err != nil || got.HeadPipeline == nil || got.HeadPipeline.ID != pl || got.HeadPipeline.Status != "failed" {
		t.Errorf("head pipeline: %+v, %v", got.HeadPipeline, err)
	}
}

// Errors as GitLab gives them: 401 for a bad token, 404 "Project Not
// Found" for a project the token cannot see, 403 for a Reporter opening
// a merge request, 429 with Retry-After; an OAuth token goes as Bearer.
func TestFakeAnswersErrorsLikeGitLab(t *testing.T) {
	s := New("glpat-tok")
	defer s.Close()
	s.AddProject("acme/r", bare(t), Reporter)
	s.AddProject("acme/secret", bare(t), NoAccess)

	_, resp, err := client(t, s, "wrong").Users.CurrentUser()
	var er *gitlab.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != http.StatusUnauthorized || !strings.Contains(er.Message, "401 Unauthorized") {
		t.Errorf("a bad token: %v", err)
	}
	gl := client(t, s, "glpat-tok")
	if _, resp, err := gl.Projects.GetProject("acme/secret", nil); !errors.Is(err, gitlab.ErrNotFound) || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a project the token cannot see: %v", err)
	}
	// The library drops a 404's body; GitLab's words are in it.
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"projects/acme%2Fsecret", nil)
	req.Header.Set("PRIVATE-TOKEN", "glpat-tok")
	if raw, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if body, _ := io.ReadAll(raw.Body); string(body) != `{"message":"404 Project Not Found"}` {
		t.Errorf("404 body %s", body)
	}
	_, resp, err = gl.MergeRequests.CreateMergeRequest("acme/r", &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("t"), SourceBranch: gitlab.Ptr("h9/x"), TargetBranch: gitlab.Ptr("main")})
	if !errors.As(err, &er) || resp.StatusCode != http.StatusForbidden || !strings.Contains(er.Message, "403 Forbidden") {
		t.Errorf("a Reporter's merge request: %v", err)
	}

	reset := time.Now().Add(time.Minute)
	s.RateLimit(reset)
	_, resp, err = gl.Users.CurrentUser()
	if err == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("RateLimit-Reset") == "" {
		t.Errorf("rate limited: %v, %v", resp.Header, err)
	}

	oauth, err := gitlab.NewAuthSourceClient(gitlab.OAuthTokenSource{TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "glpat-tok"})},
		gitlab.WithBaseURL(s.URL()), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	if u, _, err := oauth.Users.CurrentUser(); err != nil || u.Username != s.Login() {
		t.Errorf("Bearer: %+v, %v", u, err)
	}
}

// Git over HTTP as GitLab serves it: the token as the password; a
// Reporter may clone, not push.
func TestFakeServesGit(t *testing.T) {
	s := New("glpat-tok")
	defer s.Close()
	s.AddProject("acme/team/r", bare(t), Reporter)
	authed := strings.Replace(s.GitURL("acme/team/r"), "http://", "http://oauth2:glpat-tok@", 1)
	work := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", authed, work).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	out, err := exec.Command("git", "-C", work, "push", "-q", "origin", "HEAD:refs/heads/new").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "403") {
		t.Errorf("a Reporter's push: %v\n%s", err, out)
	}
	wrong := strings.Replace(s.GitURL("acme/team/r"), "http://", "http://oauth2:nope@", 1)
	ls := exec.Command("git", "-c", "credential.helper=", "ls-remote", wrong)
	ls.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if out, err := ls.CombinedOutput(); err == nil || !strings.Contains(string(out), "Authentication failed") {
		t.Errorf("a wrong token: %v\n%s", err, out)
	}
	if users := s.GitUsers(); len(users) == 0 || users[0] != "oauth2" {
		t.Errorf("git users %v", users)
	}
}

// The official client reads the fake's issues as GitLab's: listed by
// label or assignee and updated_after, oldest update first; an issue's
// resource label events and its system notes; a note on it; a branch's
// head commit with its last pipeline.
func TestGitLabClientReadsIssues(t *testing.T) {
	s := New("glpat-tok")
	defer s.Close()
	dir := bare(t)
	s.AddProject("acme/team/r", dir, Developer)
	n := s.AddIssue("acme/team/r", "carol", "A bug", "it breaks")
	s.Label("acme/team/r", n, "h9", "alice")
	other := s.AddIssue("acme/team/r", "carol", "Another", "")
	s.Assign("acme/team/r", other, "h9-bot", "bob")
	gl := client(t, s, "glpat-tok")
	list, _, err := gl.Issues.ListProjectIssues("acme/team/r", &gitlab.ListProjectIssuesOptions{Labels: &gitlab.LabelOptions{"h9"},
		UpdatedAfter: gitlab.Ptr(time.Now().Add(-time.Hour)), OrderBy: gitlab.Ptr("updated_at"), Sort: gitlab.Ptr("asc")})
	if err != nil || len(list) != 1 || list[0].IID != int64(n) || list[0].Description != "it breaks" {
		t.Errorf("by label: %+v, %v", list, err)
	}
	if list, _, err := gl.Issues.ListProjectIssues("acme/team/r", &gitlab.ListProjectIssuesOptions{UpdatedAfter: gitlab.Ptr(time.Now().Add(time.Hour))}); err != nil || len(list) != 0 {
		t.Errorf("updated after an hour from now: %+v, %v", list, err)
	}
	events, _, err := gl.ResourceLabelEvents.ListIssueLabelEvents("acme/team/r", int64(n), nil)
	if err != nil || len(events) != 1 || events[0].Action != "add" || events[0].Label.Name != "h9" || events[0].User.Username != "alice" {
		t.Errorf("label events: %+v, %v", events, err)
	}
	notes, _, err := gl.Notes.ListIssueNotes("acme/team/r", int64(other), &gitlab.ListIssueNotesOptions{Sort: gitlab.Ptr("asc")})
	if err != nil || len(notes) != 1 || !notes[0].System || notes[0].Body != "assigned to @h9-bot" || notes[0].Author.Username != "bob" {
		t.Errorf("notes: %+v, %v", notes, err)
	}
	if _, _, err := gl.Notes.CreateIssueNote("acme/team/r", int64(n), &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("on it")}); err != nil {
		t.Fatal(err)
	}
	if got := s.IssueNotes("acme/team/r", n); len(got) != 1 || got[0].Body != "on it" {
		t.Errorf("issue notes: %+v", got)
	}
	// A person's notes count in user_notes_count and come newest first
	// (GitLab's default) among the system notes.
	s.AddIssueNote("acme/team/r", other, "carol", "still broken")
	if is, _, err := gl.Issues.GetIssue("acme/team/r", int64(other)); err != nil || is.UserNotesCount != 1 {
		t.Errorf("user notes count: %+v, %v", is, err)
	}
	notes, _, err = gl.Notes.ListIssueNotes("acme/team/r", int64(other), &gitlab.ListIssueNotesOptions{OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("desc")})
	if err != nil || len(notes) != 2 || notes[0].System || notes[0].Body != "still broken" || notes[0].Author.Username != "carol" || !notes[1].System {
		t.Errorf("notes newest first: %+v, %v", notes, err)
	}
	out, err := exec.Command("git", "--git-dir="+dir, "rev-parse", "h9/x").Output()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(string(out))
	pl := s.AddPipeline("acme/team/r", head, "failed")
	commit, _, err := gl.Commits.GetCommit("acme/team/r", "h9/x", nil)
	if err != nil || commit.ID != head || commit.LastPipeline == nil || commit.LastPipeline.ID != pl || commit.LastPipeline.Status != "failed" {
		t.Errorf("head of h9/x: %+v, %v", commit, err)
	}
}

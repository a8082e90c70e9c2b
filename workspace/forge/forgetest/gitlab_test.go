package forgetest_test

import (
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

// gitLabFake adapts fakegitlab to the suite, on a project in a subgroup
// (its path travels URL-encoded).
type gitLabFake struct{}

type gitLabForge struct{ gl *fakegitlab.Server }

const glProject = "acme/team/r"

func (gitLabFake) Start(t *testing.T, bare string, push bool) forgetest.Forge {
	gl := fakegitlab.New("glpat-good")
	t.Cleanup(gl.Close)
	gl.AddProject(glProject, bare, map[bool]int{true: fakegitlab.Developer, false: fakegitlab.Reporter}[push])
	return gitLabForge{gl: gl}
}

func (f gitLabForge) Project() forge.Project {
	return forge.Project{Kind: forge.GitLab, Path: glProject, API: f.gl.URL(), TokenEnv: "H9_GITLAB_TOKEN"}
}
func (f gitLabForge) Token() string { return "glpat-good" }
func (f gitLabForge) Login() string { return f.gl.Login() }
func (f gitLabForge) Grant(login string, write bool) {
	f.gl.SetAccess(login, map[bool]int{true: fakegitlab.Developer, false: fakegitlab.Reporter}[write])
}
func (f gitLabForge) AddInline(n int, author, path string, line int, body string) {
	f.gl.AddDiffNote(glProject, n, author, path, line, body, "")
}

// AddReview requests changes without a summary: a summary is a note of
// its own on GitLab, which the suite would count as a conversation comment.
func (f gitLabForge) AddReview(n int, author, _ string) bool {
	f.gl.AddReview(glProject, n, author, "")
	return true
}
func (f gitLabForge) AddComment(n int, author, body string) {
	f.gl.AddNote(glProject, n, author, body)
}
func (f gitLabForge) AddFailingCheck(sha, name, log string) {
	id := f.gl.AddPipeline(glProject, sha, "failed")
	f.gl.AddJob(glProject, id, name, "failed", log)
}

// AddFailingStatus: a GitLab commit status belongs to a pipeline, which
// AddFailingCheck covers.
func (f gitLabForge) AddFailingStatus(string, string, string) bool { return false }
func (f gitLabForge) Merge(n int, by string)                       { f.gl.Merge(glProject, n, by) }
func (f gitLabForge) Close(n int, by string)                       { f.gl.CloseMR(glProject, n, by) }
func (f gitLabForge) RateLimit(until time.Time)                    { f.gl.RateLimit(until) }
func (f gitLabForge) Body(n int) string                            { return f.gl.MergeRequests(glProject)[n-1].Description }

func TestGitLabConforms(t *testing.T) { forgetest.Run(t, gitLabFake{}) }

func (f gitLabForge) AddIssue(author, title, body string) int {
	return f.gl.AddIssue(glProject, author, title, body)
}
func (f gitLabForge) Label(n int, label, actor string) { f.gl.Label(glProject, n, label, actor) }
func (f gitLabForge) Assign(n int, assignee, actor string) {
	f.gl.Assign(glProject, n, assignee, actor)
}
func (f gitLabForge) CloseIssue(n int, by string) { f.gl.CloseIssue(glProject, n, by) }
func (f gitLabForge) IssueComments(n int) []string {
	var out []string
	for _, note := range f.gl.IssueNotes(glProject, n) {
		if note.Author == f.gl.Login() && !note.System {
			out = append(out, note.Body)
		}
	}
	return out
}
func (f gitLabForge) AddIssueComment(n int, author, body string) {
	f.gl.AddIssueNote(glProject, n, author, body)
}

package forgetest_test

import (
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

// giteaFake adapts fakegitea to the suite; a failing check is a Gitea
// Actions job, whose log the API serves.
type giteaFake struct{}

type giteaForge struct{ gt *fakegitea.Server }

const gtRepo = "acme/r"

func (giteaFake) Start(t *testing.T, bare string, push bool) forgetest.Forge {
	gt := fakegitea.New("gt_good")
	t.Cleanup(gt.Close)
	gt.AddRepo(gtRepo, bare, push)
	return giteaForge{gt: gt}
}

func (f giteaForge) Project() forge.Project {
	return forge.Project{Kind: forge.Gitea, Path: gtRepo, API: f.gt.URL(), TokenEnv: "H9_GITEA_TOKEN"}
}
func (f giteaForge) Token() string { return "gt_good" }
func (f giteaForge) Login() string { return f.gt.Login() }
func (f giteaForge) Grant(login string, write bool) {
	f.gt.SetPermission(login, map[bool]string{true: "write", false: "read"}[write])
}
func (f giteaForge) AddInline(n int, author, path string, line int, body string) {
	f.gt.AddInline(gtRepo, n, author, path, line, "@@ -10,3 +10,3 @@\n // line 10\n // line 11\n-// line 12\n+func renamed() {}", body, 0)
}
func (f giteaForge) AddReview(n int, author, body string) bool {
	f.gt.AddReview(gtRepo, n, author, "REQUEST_CHANGES", body)
	return true
}
func (f giteaForge) AddComment(n int, author, body string) { f.gt.AddComment(gtRepo, n, author, body) }
func (f giteaForge) AddFailingCheck(sha, name, log string) {
	f.gt.AddActionsJob(gtRepo, sha, "ci", name, "failure", log)
}
func (f giteaForge) AddFailingStatus(sha, context, description string) bool {
	f.gt.AddStatus(gtRepo, sha, context, "failure", description, "https://ci.example/deploy")
	return true
}
func (f giteaForge) Merge(n int, by string)    { f.gt.Merge(gtRepo, n, by) }
func (f giteaForge) Close(n int, by string)    { f.gt.ClosePull(gtRepo, n, by) }
func (f giteaForge) RateLimit(until time.Time) { f.gt.RateLimit(time.Until(until)) }
func (f giteaForge) Body(n int) string         { return f.gt.Pulls(gtRepo)[n-1].Body }

func TestGiteaConforms(t *testing.T) { forgetest.Run(t, giteaFake{}) }

func (f giteaForge) AddIssue(author, title, body string) int {
	return f.gt.AddIssue(gtRepo, author, title, body)
}
func (f giteaForge) Label(n int, label, actor string)     { f.gt.Label(gtRepo, n, label, actor) }
func (f giteaForge) Assign(n int, assignee, actor string) { f.gt.Assign(gtRepo, n, assignee, actor) }
func (f giteaForge) CloseIssue(n int, by string)          { f.gt.CloseIssue(gtRepo, n, by) }
func (f giteaForge) IssueComments(n int) []string {
	var out []string
	for _, c := range f.gt.Comments(gtRepo, n) {
		if c.Author == f.gt.Login() {
			out = append(out, c.Body)
		}
	}
	return out
}
func (f giteaForge) AddIssueComment(n int, author, body string) {
	f.gt.AddComment(gtRepo, n, author, body)
}

package forgetest_test

import (
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

// gitHubFake adapts fakegithub to the suite.
type gitHubFake struct{}

type gitHubForge struct{ gh *fakegithub.Server }

const ghRepo = "acme/r"

func (gitHubFake) Start(t *testing.T, bare string, push bool) forgetest.Forge {
	gh := fakegithub.New("ghp_good")
	t.Cleanup(gh.Close)
	gh.AddRepo(ghRepo, bare, push)
	return gitHubForge{gh: gh}
}

func (f gitHubForge) Project() forge.Project {
	return forge.Project{Kind: forge.GitHub, Path: ghRepo, API: f.gh.URL(), TokenEnv: "H9_GITHUB_TOKEN"}
}
func (f gitHubForge) Token() string { return "ghp_good" }
func (f gitHubForge) Login() string { return f.gh.Login() }
func (f gitHubForge) Grant(login string, write bool) {
	f.gh.SetPermission(login, map[bool]string{true: "write", false: "read"}[write])
}
func (f gitHubForge) AddInline(n int, author, path string, line int, body string) {
	f.gh.AddInline(ghRepo, n, author, path, line, "@@ -10,3 +10,3 @@\n // line 10\n // line 11\n-// line 12\n+func renamed() {}", body, 0)
}
func (f gitHubForge) AddReview(n int, author, body string) bool {
	f.gh.AddReview(ghRepo, n, author, "CHANGES_REQUESTED", body)
	return true
}
func (f gitHubForge) AddComment(n int, author, body string) { f.gh.AddComment(ghRepo, n, author, body) }
func (f gitHubForge) AddFailingCheck(sha, name, log string) {
	f.gh.AddCheckRun(ghRepo, sha, name, "github-actions", "failure", log)
}
func (f gitHubForge) AddFailingStatus(sha, context, description string) bool {
	f.gh.AddStatus(ghRepo, sha, context, "error", description, "https://ci.example/deploy")
	return true
}
func (f gitHubForge) Merge(n int, by string)    { f.gh.Merge(ghRepo, n, by) }
func (f gitHubForge) Close(n int, by string)    { f.gh.ClosePull(ghRepo, n, by) }
func (f gitHubForge) RateLimit(until time.Time) { f.gh.RateLimit(until) }
func (f gitHubForge) Body(n int) string         { return f.gh.Pulls(ghRepo)[n-1].Body }

func TestGitHubConforms(t *testing.T) { forgetest.Run(t, gitHubFake{}) }

func (f gitHubForge) AddIssue(author, title, body string) int {
	return f.gh.AddIssue(ghRepo, author, title, body)
}
func (f gitHubForge) Label(n int, label, actor string)     { f.gh.Label(ghRepo, n, label, actor) }
func (f gitHubForge) Assign(n int, assignee, actor string) { f.gh.Assign(ghRepo, n, assignee, actor) }
func (f gitHubForge) CloseIssue(n int, by string)          { f.gh.CloseIssue(ghRepo, n, by) }
func (f gitHubForge) IssueComments(n int) []string {
	var out []string
	for _, w := range f.gh.Written(ghRepo, n) {
		out = append(out, w.Body)
	}
	return out
}
func (f gitHubForge) AddIssueComment(n int, author, body string) {
	f.gh.AddComment(ghRepo, n, author, body)
}

// Package forgetest is the conformance suite of the forge seam: every
// forge's client, run against that forge's fake at the HTTP boundary,
// must open one request however often it is asked, check the token's
// rights, find each kind of feedback once with its author's right and
// h9's own flagged, bring failing checks with their log's tail, see
// merged and closed with by whom, answer a request that does not exist
// with a 404, make its replies and comments visible, turn a rate limit
// into *forge.RateLimited, and keep a quiet poll cheap.
//
// A forge plugs in with an adapter of its fake implementing Fake (see
// the _test files here) and one test calling Run.
package forgetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// Fake starts one forge's fake for one test.
type Fake interface {
	// Start serves one project backed by the bare repository bare; the
	// token's user may push there and open requests iff push.
	Start(t *testing.T, bare string, push bool) Forge
}

// Forge is a started fake, seeded and read the way its forge's people
// and CI would.
type Forge interface {
	Project() forge.Project // the served project, its API and token variable
	Token() string          // the token the fake accepts
	Login() string          // the token's own user
	// Grant gives login the forge's write access (GitHub write, GitLab
	// Developer, Gitea write) or takes it away (read, Reporter).
	Grant(login string, write bool)
	AddInline(n int, author, path string, line int, body string)
	// AddReview adds a review requesting changes (with body where the
	// forge keeps it on the review); false when the forge has no reviews.
	AddReview(n int, author, body string) bool
	AddComment(n int, author, body string)
	// AddFailingCheck fails a check or job name on sha, its log log.
	AddFailingCheck(sha, name, log string)
	// AddFailingStatus sets an errored commit status context on sha, with
	// description and no log; false when the forge has no commit status
	// apart from its pipelines (GitLab).
	AddFailingStatus(sha, context, description string) bool
	Merge(n int, by string)
	Close(n int, by string)
	// RateLimit makes the next call answer "rate limited until".
	RateLimit(until time.Time)
	// Body is request n's body (description) as the forge holds it.
	Body(n int) string
	IssueForge
}

// Branch is the session branch of the suite's repository, one commit
// ahead of main; File is the file it changes at Line.
const (
	Branch = "h9/x"
	File   = "a.go"
	Line   = 12
)

// QuietBudget is the most requests one poll of a quiet request may
// make: ≤ 300 an hour at H9_FORGE_POLL=60s.
const QuietBudget = 5

// Run runs the suite against f.
func Run(t *testing.T, f Fake) {
	t.Run("OpenRequestTwice", func(t *testing.T) { openTwice(t, f) })
	t.Run("CheckAccess", func(t *testing.T) { checkAccess(t, f) })
	t.Run("PollFindsEachFeedbackOnce", func(t *testing.T) { pollOnce(t, f) })
	t.Run("ChecksThatAppearLater", func(t *testing.T) { lateChecks(t, f) })
	t.Run("ReplyAndCommentAreSeen", func(t *testing.T) { replyAndComment(t, f) })
	t.Run("UnknownRequest", func(t *testing.T) { unknownRequest(t, f) })
	t.Run("MergedAndClosed", func(t *testing.T) { mergedAndClosed(t, f) })
	t.Run("RateLimited", func(t *testing.T) { rateLimited(t, f) })
	t.Run("IssueEvents", func(t *testing.T) { issueEvents(t, f) })
	t.Run("IssueComments", func(t *testing.T) { issueComments(t, f) })
	t.Run("BranchChecks", func(t *testing.T) { branchChecks(t, f) })
}

// Bare is a bare repository with main and Branch, Branch changing File at
// Line, and a second branch h9/y; it returns Branch's commit.
func Bare(t testing.TB) (dir, headSHA string) {
	t.Helper()
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "r.git")
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(change string) {
		var b strings.Builder
		for i := 1; i <= 30; i++ {
			if i == Line && change != "" {
				b.WriteString(change + "\n")
				continue
			}
			b.WriteString("// line " + strconv.Itoa(i) + "\n")
		}
		if err := os.WriteFile(filepath.Join(work, File), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	git("checkout", "-q", "-b", "h9/y")
	git("commit", "-q", "--allow-empty", "-m", "other")
	git("checkout", "-q", "main")
	git("checkout", "-q", "-b", Branch)
	write("func renamed() {}")
	git("commit", "-q", "-am", "second")
	sha := git("rev-parse", "HEAD")
	if out, err := exec.Command("git", "clone", "-q", "--bare", work, bare).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	return bare, sha
}

// Client is the forge's client for fg's project with token.
func Client(t testing.TB, fg Forge, token string) forge.Client {
	t.Helper()
	c, err := forge.New(fg.Project(), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

package gitrepo

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v75/github"

	"github.com/h9-app/h9/workspace/forge/fakegithub"
)

// prFixture is a session with a pushed commit, on a repository the fake
// GitHub serves from the same bare remote.
func prFixture(t *testing.T, token string) (*fixture, *fakegithub.Server, Session, string) {
	t.Helper()
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	gh := fakegithub.New("ghp_right")
	t.Cleanup(gh.Close)
	gh.AddRepo("acme/r", remote, true)
	f := newFixture(t, "none", Repo{Name: "r", URL: remote, GitHub: "acme/r"}, func(c *Config) {
		c.GitHubToken, c.GitHubAPI = token, gh.URL()
	})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 1 > one", false)
	if _, err := f.repos.Checkpoint(f.ctx, ws, s, "one", nil); err != nil {
		t.Fatal(err)
	}
	return f, gh, s, remote
}

// Open pull request twice: one pull request, the same URL both times, its
// body brought up to date; GitHub got the title, head, base and body.
func TestPullRequestIsOpenedOnce(t *testing.T) {
	f, gh, s, _ := prFixture(t, "ghp_right")
	if _, err := f.repos.OpenPullRequest(f.ctx, s, "Fix it", "body"); err == nil {
		t.Fatal("a pull request for a branch never pushed was opened")
	}
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatal(err)
	}
	first, err := f.repos.OpenPullRequest(f.ctx, s, "Fix it", "- [x] one")
	if err != nil || first.URL == "" || first.Reused {
		t.Fatalf("first = %+v, %v", first, err)
	}
	second, err := f.repos.OpenPullRequest(f.ctx, s, "Fix it", "- [x] one\n- [x] two")
	if err != nil || second.URL != first.URL || !second.Reused {
		t.Fatalf("second = %+v, %v; want %s reused", second, err, first.URL)
	}
	pulls := gh.Pulls("acme/r")
	if len(pulls) != 1 || pulls[0].Head != s.Branch || pulls[0].Base != "main" || pulls[0].Title != "Fix it" || pulls[0].Body != "- [x] one\n- [x] two" {
		t.Errorf("pulls = %+v", pulls)
	}
	for _, r := range gh.Requests() {
		if r.Method == "POST" && r.Status == 201 {
			var body map[string]any
			json.Unmarshal(r.Body, &body)
			if body["head"] != s.Branch || body["base"] != "main" {
				t.Errorf("create body %s", r.Body)
			}
		}
	}
}

// The 422 GitHub answers for a second pull request on one head (opened
// meanwhile elsewhere) leads to the one that exists.
func TestPullRequestOpenedMeanwhileIsReused(t *testing.T) {
	f, gh, s, _ := prFixture(t, "ghp_right")
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatal(err)
	}
	first, err := f.repos.OpenPullRequest(f.ctx, s, "t", "b")
	if err != nil {
		t.Fatal(err)
	}
	client := github.NewClient(nil).WithAuthToken("ghp_right")
	client.BaseURL, _ = url.Parse(gh.URL())
	// Straight to Create, as when List raced with another replica's Create.
	_, _, err = client.PullRequests.Create(f.ctx, "acme", "r", &github.NewPullRequest{
		Title: github.Ptr("t"), Head: github.Ptr(s.Branch), Base: github.Ptr("main"),
	})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second create: %v, want GitHub's 422 already exists", err)
	}
	again, err := f.repos.OpenPullRequest(f.ctx, s, "t", "b")
	if err != nil || again.URL != first.URL || len(gh.Pulls("acme/r")) != 1 {
		t.Errorf("after a 422: %+v, %v, %d pulls", again, err, len(gh.Pulls("acme/r")))
	}
}

// A bad token is GitHub's 401 in words, without the token.
func TestPullRequestWithABadToken(t *testing.T) {
	f, _, s, _ := prFixture(t, "ghp_wrong_token")
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatal(err)
	}
	_, err := f.repos.OpenPullRequest(f.ctx, s, "t", "b")
	if !errors.Is(err, ErrGitHub) || !strings.Contains(err.Error(), "401 Bad credentials") || strings.Contains(err.Error(), "ghp_wrong_token") {
		t.Errorf("bad token: %v", err)
	}
	if err := f.repos.CheckAccess(f.ctx, "r"); !errors.Is(err, ErrGitHub) {
		t.Errorf("CheckAccess with a bad token: %v", err)
	}
}

func TestCheckAccess(t *testing.T) {
	f, gh, _, remote := prFixture(t, "ghp_right")
	if err := f.repos.CheckAccess(f.ctx, "r"); err != nil {
		t.Errorf("CheckAccess: %v", err)
	}
	gh.AddRepo("acme/r", remote, false)
	if err := f.repos.CheckAccess(f.ctx, "r"); !errors.Is(err, ErrGitHub) || !strings.Contains(err.Error(), "cannot push") {
		t.Errorf("CheckAccess without push: %v", err)
	}
	if n, err := f.repos.CheckRemote(f.ctx, "r"); err != nil || n != 1 {
		t.Errorf("CheckRemote = %d, %v; want 1 branch (main)", n, err)
	}
}

// GitHub answers "already exists" but lists no open pull request for the
// head (another head owner, a race with a close): an error that says so,
// never a pull request without a URL.
func TestPullRequestThatExistsButIsNotListed(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:h9/x."}]}`)
			return
		}
		io.WriteString(w, `[]`)
	}))
	t.Cleanup(gh.Close)
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote, GitHub: "acme/r"}, func(c *Config) {
		c.GitHubToken, c.GitHubAPI = "ghp_right", gh.URL+"/"
	})
	s := f.prepare("r")
	pr, err := f.repos.OpenPullRequest(f.ctx, s, "t", "b")
	if !errors.Is(err, ErrGitHub) || !strings.Contains(err.Error(), "already exists") || pr.URL != "" {
		t.Errorf("OpenPullRequest = %+v, %v; want an error naming the missing pull request", pr, err)
	}
}

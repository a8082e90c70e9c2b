package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v75/github"
)

// PullRequest is an open pull request of a session branch.
type PullRequest struct {
	URL    string
	Number int
	Reused bool // it existed already (its body is brought up to date)
}

// OpenPullRequest opens the pull request of the session branch onto its
// base, or finds the one already open for that head (GitHub allows one):
// a second call answers the same pull request, never a duplicate. The
// branch must have been pushed.
func (r *Repos) OpenPullRequest(ctx context.Context, s Session, title, body string) (PullRequest, error) {
	repo, err := r.checkSession(s)
	if err != nil {
		return PullRequest{}, err
	}
	if !r.CanOpenPullRequests(repo) {
		return PullRequest{}, fmt.Errorf("%w for %s (it needs a GitHub name and H9_GITHUB_TOKEN)", ErrNoPullRequests, repo.Name)
	}
	gh, err := r.github()
	if err != nil {
		return PullRequest{}, err
	}
	owner, name, _ := strings.Cut(repo.GitHub, "/")
	if pr, err := r.findPullRequest(ctx, gh, owner, name, s.Branch, body); err != nil || pr.Number != 0 {
		return pr, err
	}
	created, _, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{
		Title: github.Ptr(title), Head: github.Ptr(s.Branch), Base: github.Ptr(s.Base), Body: github.Ptr(body),
	})
	if isAlreadyExists(err) { // opened meanwhile, by another click or replica
		pr, err := r.findPullRequest(ctx, gh, owner, name, s.Branch, body)
		if err == nil && pr.Number == 0 {
			err = fmt.Errorf("%w: GitHub says a pull request for %s already exists, but lists no open one with head %s:%s", ErrGitHub, s.Branch, owner, s.Branch)
		}
		return pr, err
	}
	if err != nil {
		return PullRequest{}, r.githubError("opening the pull request", err)
	}
	return PullRequest{URL: created.GetHTMLURL(), Number: created.GetNumber()}, nil
}

// findPullRequest is the open pull request whose head is the branch, with
// its body updated; the zero PullRequest when there is none.
func (r *Repos) findPullRequest(ctx context.Context, gh *github.Client, owner, name, branch, body string) (PullRequest, error) {
	prs, _, err := gh.PullRequests.List(ctx, owner, name, &github.PullRequestListOptions{State: "open", Head: owner + ":" + branch})
	if err != nil {
		return PullRequest{}, r.githubError("looking for the branch's pull request", err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() != branch {
			continue
		}
		if pr.GetBody() != body {
			if _, _, err := gh.PullRequests.Edit(ctx, owner, name, pr.GetNumber(), &github.PullRequest{Body: github.Ptr(body)}); err != nil {
				return PullRequest{}, r.githubError("updating the pull request", err)
			}
		}
		return PullRequest{URL: pr.GetHTMLURL(), Number: pr.GetNumber(), Reused: true}, nil
	}
	return PullRequest{}, nil
}

// CheckAccess tells whether the token may push to repo's GitHub
// repository (for h9 doctor): nil, or why not.
func (r *Repos) CheckAccess(ctx context.Context, name string) error {
	repo, err := r.repo(name)
	if err != nil {
		return err
	}
	if !r.CanOpenPullRequests(repo) {
		return fmt.Errorf("%w for %s", ErrNoPullRequests, repo.Name)
	}
	gh, err := r.github()
	if err != nil {
		return err
	}
	owner, repoName, _ := strings.Cut(repo.GitHub, "/")
	got, _, err := gh.Repositories.Get(ctx, owner, repoName)
	if err != nil {
		return r.githubError("reading "+repo.GitHub, err)
	}
	if !got.GetPermissions()["push"] {
		return fmt.Errorf("%w: the token cannot push to %s, so it cannot open pull requests there", ErrGitHub, repo.GitHub)
	}
	return nil
}

func (r *Repos) github() (*github.Client, error) {
	base, err := url.Parse(r.cfg.GitHubAPI)
	if err != nil || !strings.HasSuffix(base.Path, "/") || base.Host == "" {
		return nil, fmt.Errorf("%w: the GitHub API URL %q must be an http(s) URL ending in /", ErrInvalidConfig, r.cfg.GitHubAPI)
	}
	gh := github.NewClient(r.cfg.HTTPClient).WithAuthToken(r.cfg.GitHubToken)
	gh.BaseURL = base
	return gh, nil
}

// githubError is ErrGitHub with GitHub's own message (never the token).
func (r *Repos) githubError(doing string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		words := er.Message
		for _, e := range er.Errors {
			if e.Message != "" {
				words += "; " + e.Message
			} else if e.Field != "" {
				words += fmt.Sprintf("; %s %s", e.Field, e.Code)
			}
		}
		if er.Response.StatusCode == http.StatusUnauthorized {
			words += " (check H9_GITHUB_TOKEN)"
		}
		return fmt.Errorf("%w: %s: %d %s", ErrGitHub, doing, er.Response.StatusCode, r.scrub(words))
	}
	return fmt.Errorf("%w: %s: %s", ErrGitHub, doing, r.scrub(err.Error()))
}

func (r *Repos) scrub(s string) string {
	if r.cfg.GitHubToken == "" {
		return s
	}
	return strings.ReplaceAll(s, r.cfg.GitHubToken, "[REDACTED]")
}

// isAlreadyExists is GitHub's 422 for a second pull request on one head.
func isAlreadyExists(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, e := range er.Errors {
		if strings.Contains(strings.ToLower(e.Message), "already exists") {
			return true
		}
	}
	return false
}

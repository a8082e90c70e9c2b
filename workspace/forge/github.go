package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v75/github"
)

// gitHub is the Client of one GitHub repository (go-github).
type gitHub struct {
	p           Project
	token       string
	owner, name string
	gh          *github.Client
	hc          *http.Client // for job logs, whose signed URLs take no token
	now         func() time.Time
}

func newGitHub(p Project, token string, base *url.URL, hc *http.Client) *gitHub {
	gh := github.NewClient(hc).WithAuthToken(token)
	gh.BaseURL = base
	owner, name, _ := strings.Cut(p.Path, "/")
	return &gitHub{p: p, token: token, owner: owner, name: name, gh: gh, hc: hc, now: time.Now}
}

func (g *gitHub) Kind() Kind { return GitHub }

// OpenRequest finds the open pull request from head (GitHub allows one)
// and brings its body up to date, or opens it; a 422 "already exists"
// (opened meanwhile by another click or replica) leads to the one that is.
func (g *gitHub) OpenRequest(ctx context.Context, head, base, title, body string) (Request, error) {
	if r, err := g.findRequest(ctx, head, body); err != nil || r.Number != 0 {
		return r, err
	}
	created, _, err := g.gh.PullRequests.Create(ctx, g.owner, g.name, &github.NewPullRequest{
		Title: github.Ptr(title), Head: github.Ptr(head), Base: github.Ptr(base), Body: github.Ptr(body),
	})
	if isAlreadyExists(err) {
		r, err := g.findRequest(ctx, head, body)
		if err == nil && r.Number == 0 {
			err = &Error{Kind: GitHub, Doing: "opening the pull request", Status: http.StatusUnprocessableEntity,
				Words: fmt.Sprintf("GitHub says a pull request for %s already exists, but lists no open one with head %s:%s", head, g.owner, head)}
		}
		return r, err
	}
	if err != nil {
		return Request{}, g.err("opening the pull request", err)
	}
	return Request{Number: created.GetNumber(), URL: created.GetHTMLURL()}, nil
}

func (g *gitHub) findRequest(ctx context.Context, head, body string) (Request, error) {
	prs, _, err := g.gh.PullRequests.List(ctx, g.owner, g.name, &github.PullRequestListOptions{State: "open", Head: g.owner + ":" + head})
	if err != nil {
		return Request{}, g.err("looking for the branch's pull request", err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() != head {
			continue
		}
		if pr.GetBody() != body {
			if _, _, err := g.gh.PullRequests.Edit(ctx, g.owner, g.name, pr.GetNumber(), &github.PullRequest{Body: github.Ptr(body)}); err != nil {
				return Request{}, g.err("updating the pull request", err)
			}
		}
		return Request{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Reused: true}, nil
	}
	return Request{}, nil
}

// CheckAccess reads the repository: its permissions say whether the token
// may push (and so open pull requests).
func (g *gitHub) CheckAccess(ctx context.Context) error {
	got, _, err := g.gh.Repositories.Get(ctx, g.owner, g.name)
	if err != nil {
		return g.err("reading "+g.p.Path, err)
	}
	if !got.GetPermissions()["push"] {
		return &Error{Kind: GitHub, Doing: "checking the token's rights",
			Words: fmt.Sprintf("the token in %s cannot push to %s, so it cannot open pull requests there (it needs contents: write and pull requests: write)", g.p.TokenEnv, g.p.Path)}
	}
	return nil
}

// Reply answers an inline comment in its thread.
func (g *gitHub) Reply(ctx context.Context, number int, to Feedback, body string) error {
	if to.Kind != Inline {
		return g.Comment(ctx, number, body)
	}
	id, err := strconv.ParseUint(to.Thread, 10, 63) // digits only: no sign
	if err != nil {
		return fmt.Errorf("%w: GitHub, replying: %q is not a review comment id", ErrAPI, to.Thread)
	}
	// The documented reply endpoint (go-github's CreateCommentInReplyTo
	// posts in_reply_to to the comments list instead).
	req, err := g.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", g.owner, g.name, number, id), map[string]string{"body": body})
	if err != nil {
		return err
	}
	if _, err := g.gh.Do(ctx, req, nil); err != nil {
		return g.err("replying to a review comment", err)
	}
	return nil
}

// Comment adds a comment to the pull request's conversation.
func (g *gitHub) Comment(ctx context.Context, number int, body string) error {
	if _, _, err := g.gh.Issues.CreateComment(ctx, g.owner, g.name, number, &github.IssueComment{Body: github.Ptr(body)}); err != nil {
		return g.err("commenting on the pull request", err)
	}
	return nil
}

// err turns go-github's errors into Error or RateLimited.
func (g *gitHub) err(doing string, err error) error {
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl):
		return &RateLimited{Kind: GitHub, Until: rl.Rate.Reset.Time}
	case errors.As(err, &abuse):
		wait := time.Minute
		if abuse.RetryAfter != nil {
			wait = *abuse.RetryAfter
		}
		return &RateLimited{Kind: GitHub, Until: g.now().Add(wait)}
	case errors.As(err, &er) && er.Response != nil:
		if until, ok := retryAfter(er.Response.Header, er.Response.StatusCode, g.now()); ok {
			return &RateLimited{Kind: GitHub, Until: until}
		}
		words := er.Message
		for _, e := range er.Errors {
			if e.Message != "" {
				words += "; " + e.Message
			} else if e.Field != "" {
				words += fmt.Sprintf("; %s %s", e.Field, e.Code)
			}
		}
		return apiError(g.p, g.token, doing, er.Response.StatusCode, words)
	}
	return &Error{Kind: GitHub, Doing: doing, Words: scrub(err.Error(), g.token)}
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

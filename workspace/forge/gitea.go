package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// giteaBuilt is whether the Gitea client below is complete.
const giteaBuilt = true

// gitea is the Client of one Gitea or Forgejo repository
// (code.gitea.io/sdk/gitea).
type gitea struct {
	p           Project
	token       string
	owner, name string
	root        string // the server's root: the API base without api/v1/
	hc          *http.Client
	now         func() time.Time

	mu      sync.Mutex
	version string // the server's, read once (the SDK asks it first)
}

func newGitea(p Project, token string, hc *http.Client) (Client, error) {
	root, ok := strings.CutSuffix(p.API, "api/v1/")
	if !ok {
		return nil, fmt.Errorf("%w: the Gitea API URL %q must end in /api/v1/", ErrAPI, p.API)
	}
	owner, name, _ := strings.Cut(p.Path, "/")
	return &gitea{p: p, token: token, owner: owner, name: name, root: root, hc: hc, now: time.Now}, nil
}

func (g *gitea) Kind() Kind { return Gitea }

// client is an SDK client bound to ctx: the SDK keeps one context per
// client, so each call gets its own. The server's version (which the SDK
// checks its calls against) is read on the first call only.
func (g *gitea) client(ctx context.Context, hc *http.Client) (*sdk.Client, error) {
	opts := []sdk.ClientOption{sdk.SetHTTPClient(hc), sdk.SetToken(g.token), sdk.SetContext(ctx), sdk.SetUserAgent("h9")}
	g.mu.Lock()
	v := g.version
	g.mu.Unlock()
	if v == "" {
		probe, err := sdk.NewClient(g.root, append(opts, sdk.SetGiteaVersion(""))...)
		if err != nil {
			return nil, &Error{Kind: Gitea, Doing: "reaching " + g.root, Words: scrub(err.Error(), g.token)}
		}
		got, resp, err := probe.ServerVersion()
		switch {
		case err != nil && resp != nil && resp.StatusCode == http.StatusNotFound:
			got = unknownVersion // a proxy or a server that hides it: go on without
		case err != nil:
			return nil, g.err("reading the server's version", resp, err)
		}
		v = got
		g.learnVersion(v)
	}
	c, err := sdk.NewClient(g.root, append(opts, sdk.SetGiteaVersion(v))...)
	if err != nil || v == unknownVersion { // a version the SDK cannot parse, or none: skip its checks
		c, err = sdk.NewClient(g.root, append(opts, sdk.SetGiteaVersion(""))...)
	}
	if err != nil {
		return nil, &Error{Kind: Gitea, Doing: "reaching " + g.root, Words: scrub(err.Error(), g.token)}
	}
	return c, nil
}

// unknownVersion stands for a server that serves no version.
const unknownVersion = "unknown"

// notGitea adds to a 404 from a server that serves no version either
// that forge.api is likely no Gitea's API.
func (g *gitea) notGitea(err error) error {
	var fe *Error
	if g.serverVersion() == unknownVersion && errors.As(err, &fe) && fe.Status == http.StatusNotFound {
		fe.Words += fmt.Sprintf("; %s serves no version either: is it the API of a Gitea or Forgejo server?", g.p.API)
	}
	return err
}

// learnVersion keeps the server's version v ("" changes nothing).
func (g *gitea) learnVersion(v string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v != "" {
		g.version = v
	}
}

func (g *gitea) serverVersion() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.version
}

// err turns the SDK's answer into Error or RateLimited: the SDK returns
// the response with a non-2xx status, and Gitea's message as the error.
func (g *gitea) err(doing string, resp *sdk.Response, err error) error {
	if resp != nil && resp.Response != nil && resp.StatusCode >= 400 {
		if until, ok := retryAfter(resp.Header, resp.StatusCode, g.now()); ok {
			return &RateLimited{Kind: Gitea, Until: until}
		}
		return apiError(g.p, g.token, doing, resp.StatusCode, err.Error())
	}
	return &Error{Kind: Gitea, Doing: doing, Words: scrub(err.Error(), g.token)}
}

// OpenRequest finds the open pull request from head (onto any base) and
// brings its body up to date, or opens it onto base; a 409 (opened
// meanwhile by another click or replica) leads to the one that is.
func (g *gitea) OpenRequest(ctx context.Context, head, base, title, body string) (Request, error) {
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return Request{}, err
	}
	if r, err := g.findRequest(c, head, body); err != nil || r.Number != 0 {
		return r, err
	}
	pr, resp, err := c.CreatePullRequest(g.owner, g.name, sdk.CreatePullRequestOption{Head: head, Base: base, Title: title, Body: body})
	if err != nil && resp != nil && resp.StatusCode == http.StatusConflict {
		r, ferr := g.findRequest(c, head, body)
		if ferr == nil && r.Number == 0 {
			ferr = &Error{Kind: Gitea, Doing: "opening the pull request", Status: http.StatusConflict,
				Words: scrub(fmt.Sprintf("%v (and no open pull request from %s is listed)", err, head), g.token)}
		}
		return r, ferr
	}
	if err != nil && resp != nil && resp.StatusCode == http.StatusNotFound {
		return Request{}, &Error{Kind: Gitea, Doing: "opening the pull request", Status: http.StatusNotFound,
			Words: scrub(fmt.Sprintf("%v (%s or %s is not a branch of %s: push it first)", err, head, base, g.p.Path), g.token)}
	}
	if err != nil {
		return Request{}, g.err("opening the pull request", resp, err)
	}
	return Request{Number: int(pr.Index), URL: pr.HTMLURL}, nil
}

// findRequest pages through the open pull requests for the one from head
// in this repository.
func (g *gitea) findRequest(c *sdk.Client, head, body string) (Request, error) {
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(g.owner, g.name, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: giteaPage}, State: sdk.StateOpen})
		if err != nil {
			return Request{}, g.err("looking for the branch's pull request", resp, err)
		}
		for _, pr := range prs {
			// Any base: a pull request whose base someone changed is
			// still the branch's one, never opened twice.
			if pr.Head == nil || pr.Base == nil || pr.Head.Ref != head || pr.Head.RepoID != pr.Base.RepoID {
				continue
			}
			if pr.Body != body {
				if _, resp, err := c.EditPullRequest(g.owner, g.name, pr.Index, sdk.EditPullRequestOption{Body: &body}); err != nil {
					return Request{}, g.err("updating the pull request", resp, err)
				}
			}
			return Request{Number: int(pr.Index), URL: pr.HTMLURL, Reused: true}, nil
		}
		if resp == nil || resp.NextPage == 0 || len(prs) == 0 {
			return Request{}, nil
		}
	}
}

// giteaPage is the page size h9 asks for: Gitea's default cap
// ([api] MAX_RESPONSE_ITEMS) is 50.
const giteaPage = 50

// Comment adds a comment to the pull request's conversation (an issue
// comment: Gitea numbers pull requests and issues together).
func (g *gitea) Comment(ctx context.Context, number int, body string) error {
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return err
	}
	if _, resp, err := c.CreateIssueComment(g.owner, g.name, int64(number), sdk.CreateIssueCommentOption{Body: body}); err != nil {
		return g.err("commenting on the pull request", resp, err)
	}
	return nil
}

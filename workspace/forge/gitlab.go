package forge

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitlabBuilt is whether the GitLab client below is complete.
const gitlabBuilt = true

// developer is GitLab's access level that may push and open merge
// requests (Developer, 30); Maintainer (40) and Owner (50) are above.
const developer = gitlab.DeveloperPermissions

// gitLab is the Client of one GitLab project (gitlab.com/gitlab-org/
// api/client-go), on gitlab.com or a self-managed instance.
type gitLab struct {
	p     Project
	token string
	gl    *gitlab.Client
	now   func() time.Time

	mu     sync.Mutex
	access map[int64]accessSeen // user id → Developer or above, as last asked
}

// accessSeen is one author's membership answer, kept for accessFor.
type accessSeen struct {
	can bool
	at  time.Time
}

// accessFor is how long an author's access level is trusted before it is
// asked again: a poll a minute would otherwise ask it every poll.
const accessFor = 10 * time.Minute

func newGitLab(p Project, token string, hc *http.Client) (Client, error) {
	keeper := *hc
	keeper.Transport = bodyKeeper{next: transportOf(hc)}
	// No retries inside the library: a 429 is h9's to wait out (RateLimited),
	// and a POST retried blindly could open a second merge request.
	gl, err := gitlab.NewClient(token, gitlab.WithBaseURL(p.API), gitlab.WithHTTPClient(&keeper), gitlab.WithoutRetries())
	if err != nil {
		return nil, &Error{Kind: GitLab, Doing: "making the client", Words: scrub(err.Error(), token)}
	}
	return &gitLab{p: p, token: token, gl: gl, now: time.Now, access: map[int64]accessSeen{}}, nil
}

func (g *gitLab) Kind() Kind { return GitLab }

// OpenRequest finds the open merge request from head (GitLab allows one
// per source branch) and brings its description up to date, or opens it;
// a 409 "already exists" (opened meanwhile by another click or replica)
// leads to the one that is.
func (g *gitLab) OpenRequest(ctx context.Context, head, base, title, body string) (Request, error) {
	if r, err := g.findRequest(ctx, head, body); err != nil || r.Number != 0 {
		return r, err
	}
	var mr *gitlab.MergeRequest
	err := g.call(ctx, "opening the merge request", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		mr, resp, err = g.gl.MergeRequests.CreateMergeRequest(g.p.Path, &gitlab.CreateMergeRequestOptions{
			Title: gitlab.Ptr(title), Description: gitlab.Ptr(body), SourceBranch: gitlab.Ptr(head), TargetBranch: gitlab.Ptr(base),
		}, o)
		return resp, err
	})
	if e, ok := err.(*Error); ok && e.Status == http.StatusConflict {
		r, err := g.findRequest(ctx, head, body)
		if err == nil && r.Number == 0 {
			err = e
		}
		return r, err
	}
	if err != nil {
		return Request{}, err
	}
	return Request{Number: int(mr.IID), URL: mr.WebURL}, nil
}

func (g *gitLab) findRequest(ctx context.Context, head, body string) (Request, error) {
	var mrs []*gitlab.BasicMergeRequest
	err := g.call(ctx, "looking for the branch's merge request", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		mrs, resp, err = g.gl.MergeRequests.ListProjectMergeRequests(g.p.Path, &gitlab.ListProjectMergeRequestsOptions{
			State: gitlab.Ptr("opened"), SourceBranch: gitlab.Ptr(head), ListOptions: gitlab.ListOptions{PerPage: 20},
		}, o)
		return resp, err
	})
	if err != nil {
		return Request{}, err
	}
	for _, mr := range mrs {
		if mr.SourceBranch != head || mr.SourceProjectID != mr.TargetProjectID {
			continue // a fork's branch of the same name is not h9's
		}
		if mr.Description != body {
			err := g.call(ctx, "updating the merge request", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
				_, resp, err := g.gl.MergeRequests.UpdateMergeRequest(g.p.Path, mr.IID, &gitlab.UpdateMergeRequestOptions{Description: gitlab.Ptr(body)}, o)
				return resp, err
			})
			if err != nil {
				return Request{}, err
			}
		}
		return Request{Number: int(mr.IID), URL: mr.WebURL, Reused: true}, nil
	}
	return Request{}, nil
}

// Reply answers an inline comment in its discussion; anything else is
// answered with a comment on the merge request.
func (g *gitLab) Reply(ctx context.Context, number int, to Feedback, body string) error {
	if to.Kind != Inline || to.Thread == "" {
		return g.Comment(ctx, number, body)
	}
	return g.call(ctx, "replying in a discussion", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
		_, resp, err := g.gl.Discussions.AddMergeRequestDiscussionNote(g.p.Path, int64(number), to.Thread,
			&gitlab.AddMergeRequestDiscussionNoteOptions{Body: gitlab.Ptr(body)}, o)
		return resp, err
	})
}

// Comment adds a note to the merge request.
func (g *gitLab) Comment(ctx context.Context, number int, body string) error {
	return g.call(ctx, "commenting on the merge request", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
		_, resp, err := g.gl.Notes.CreateMergeRequestNote(g.p.Path, int64(number), &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, o)
		return resp, err
	})
}

// call makes one API call through fn and turns its failure into an Error
// (GitLab's own words, kept by bodyKeeper) or a RateLimited.
func (g *gitLab) call(ctx context.Context, doing string, fn func(gitlab.RequestOptionFunc) (*gitlab.Response, error)) error {
	kept := &keptBody{}
	resp, err := fn(gitlab.WithContext(context.WithValue(ctx, keptKey{}, kept)))
	if err == nil {
		return nil
	}
	if resp == nil || resp.Response == nil {
		return &Error{Kind: GitLab, Doing: doing, Words: scrub(err.Error(), g.token)}
	}
	if until, ok := retryAfter(resp.Header, resp.StatusCode, g.now()); ok {
		return &RateLimited{Kind: GitLab, Until: until}
	}
	words := strings.TrimPrefix(gitlabWords(kept.data), strconv.Itoa(resp.StatusCode)+" ") // "404 Project Not Found" after the status
	if words == "" {
		words = http.StatusText(resp.StatusCode)
	}
	return apiError(g.p, g.token, doing, resp.StatusCode, words)
}

// accessName is an access level as GitLab's pages name it.
func accessName(l gitlab.AccessLevelValue) string {
	switch {
	case l >= gitlab.OwnerPermissions:
		return "Owner"
	case l >= gitlab.MaintainerPermissions:
		return "Maintainer"
	case l >= gitlab.DeveloperPermissions:
		return "Developer"
	case l >= gitlab.ReporterPermissions:
		return "Reporter"
	case l >= gitlab.GuestPermissions:
		return "Guest"
	}
	return "no"
}

// short is s on one line, at most n runes.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

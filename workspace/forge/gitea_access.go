package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	sdk "code.gitea.io/sdk/gitea"
)

// CheckAccess reads the repository (the token is accepted, the project
// exists, the token's user may push and the repository takes pull
// requests), the token's own user (scope read:user, which following needs
// to tell h9's own comments), and probes the write scopes pushing and
// commenting need.
func (g *gitea) CheckAccess(ctx context.Context) error {
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return err
	}
	repo, resp, err := c.GetRepo(g.owner, g.name)
	if err != nil {
		return g.notGitea(g.err("reading "+g.p.Path, resp, err))
	}
	lacks := func(words string) error {
		return &Error{Kind: Gitea, Doing: "checking the token's rights", Words: words}
	}
	switch {
	case repo.Permissions == nil || !repo.Permissions.Push:
		return lacks(fmt.Sprintf("the token in %s cannot push to %s, so it cannot open pull requests there (its user needs write access)", g.p.TokenEnv, g.p.Path))
	case repo.Archived:
		return lacks(fmt.Sprintf("%s is archived: nothing can be pushed to it", g.p.Path))
	case !repo.HasPullRequests:
		return lacks(fmt.Sprintf("%s has pull requests turned off in its settings", g.p.Path))
	}
	if _, resp, err := c.GetMyUserInfo(); err != nil {
		return g.err("reading the token's user (scope read:user)", resp, err)
	}
	for _, probe := range []struct{ path, scope string }{
		{fmt.Sprintf("repos/%s/%s/pulls", g.owner, g.name), "write:repository"},
		{fmt.Sprintf("repos/%s/%s/issues/0/comments", g.owner, g.name), "write:issue"},
	} {
		if err := g.probeScope(ctx, probe.path, probe.scope); err != nil {
			return err
		}
	}
	return nil
}

// probeScope POSTs an empty body to path: Gitea checks a token's scope
// before it reads the body, so a 403 means the scope is missing, while a
// token that has it gets 422 for the body and nothing is written.
func (g *gitea) probeScope(ctx context.Context, path, scope string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.p.API+path, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+g.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.hc.Do(req)
	if err != nil {
		return &Error{Kind: Gitea, Doing: "checking the token's scopes", Words: scrub(err.Error(), g.token)}
	}
	defer resp.Body.Close()
	if until, limited := retryAfter(resp.Header, resp.StatusCode, g.now()); limited {
		return &RateLimited{Kind: Gitea, Until: until}
	}
	if resp.StatusCode == http.StatusForbidden {
		var answer struct{ Message string }
		json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer)
		return &Error{Kind: Gitea, Doing: "checking the token's scopes", Status: resp.StatusCode,
			Words: scrub(fmt.Sprintf("the token in %s lacks the scope %s (h9 needs write:repository, write:issue and read:user): %s", g.p.TokenEnv, scope, answer.Message), g.token)}
	}
	return nil
}

// Reply answers an inline comment in its conversation. Gitea's newest
// versions have an endpoint for it; on the others (and Forgejo) the API
// can only add a review comment, so h9 adds one at the same path and line,
// which Gitea shows in the same conversation.
func (g *gitea) Reply(ctx context.Context, number int, to Feedback, body string) error {
	if to.Kind != Inline {
		return g.Comment(ctx, number, body)
	}
	id, old, err := parseGiteaThread(to.Thread)
	if err != nil {
		return err
	}
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return err
	}
	_, resp, err := c.CreatePullReviewCommentReply(g.owner, g.name, int64(number), id, sdk.CreatePullReviewCommentReplyOptions{Body: body})
	if err == nil {
		return nil
	}
	if resp == nil || resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		return g.err("replying to a review comment", resp, err)
	}
	comment := sdk.CreatePullReviewComment{Path: to.Path, Body: body, NewLineNum: int64(to.Line)}
	if old {
		comment.NewLineNum, comment.OldLineNum = 0, int64(to.Line)
	}
	_, resp, err = c.CreatePullReview(g.owner, g.name, int64(number), sdk.CreatePullReviewOptions{
		State: sdk.ReviewStateComment, Comments: []sdk.CreatePullReviewComment{comment}})
	if err != nil {
		return g.err("replying to a review comment", resp, err)
	}
	return nil
}

// giteaThread is a Feedback.Thread: the comment's id, and "/old" when it
// is on a removed line (a reply must sit on the same side).
func giteaThread(id int64, old bool) string {
	if old {
		return fmt.Sprintf("%d/old", id)
	}
	return fmt.Sprint(id)
}

func parseGiteaThread(s string) (id int64, old bool, err error) {
	num, side, _ := strings.Cut(s, "/")
	n, perr := strconv.ParseUint(num, 10, 63) // digits only: no sign
	if perr != nil || n == 0 || side != "" && side != "old" {
		return 0, false, fmt.Errorf("%w: Gitea, replying: %q is not a review comment", ErrAPI, s)
	}
	return int64(n), side == "old", nil
}

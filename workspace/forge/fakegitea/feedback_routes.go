package fakegitea

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

func (s *Server) reviewJSON(r *repo, n int, rv *review) map[string]any {
	return map[string]any{"id": rv.id, "user": s.userJSON(rv.author), "team": nil, "state": rv.state, "body": rv.body,
		"commit_id": "", "stale": false, "official": false, "dismissed": rv.dismissed, "comments_count": len(rv.code),
		"submitted_at": rv.submitted, "updated_at": rv.submitted,
		"html_url":         fmt.Sprintf("%s/%s/pulls/%d#issuecomment-%d", s.srv.URL, r.fullName, n, rv.id),
		"pull_request_url": fmt.Sprintf("%s/%s/pulls/%d", s.srv.URL, r.fullName, n)}
}

// codeJSON is a PullReviewComment: position is the new file's line,
// original_position the old one's, the other 0.
func (s *Server) codeJSON(r *repo, n int, c *CodeComment) map[string]any {
	pos, orig := c.Line, 0
	if c.OldSide {
		pos, orig = 0, c.Line
	}
	return map[string]any{"id": c.ID, "body": c.Body, "user": s.userJSON(c.Author), "pull_request_review_id": c.ReviewID,
		"resolver": nil, "created_at": c.Created, "updated_at": c.Created, "path": c.Path, "commit_id": "", "original_commit_id": "",
		"diff_hunk": c.Hunk, "position": pos, "original_position": orig,
		"html_url":         fmt.Sprintf("%s/%s/pulls/%d/files#issuecomment-%d", s.srv.URL, r.fullName, n, c.ID),
		"pull_request_url": fmt.Sprintf("%s/%s/pulls/%d", s.srv.URL, r.fullName, n)}
}

func (s *Server) commentJSON(r *repo, n int, c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": s.userJSON(c.Author), "original_author": "", "original_author_id": 0,
		"created_at": c.Created, "updated_at": c.Updated, "assets": []any{},
		"html_url":         fmt.Sprintf("%s/%s/pulls/%d#issuecomment-%d", s.srv.URL, r.fullName, n, c.ID),
		"pull_request_url": fmt.Sprintf("%s/%s/pulls/%d", s.srv.URL, r.fullName, n),
		"issue_url":        ""}
}

// listReviews is GET …/pulls/{index}/reviews, oldest first, paged.
func (s *Server) listReviews(r *repo, n int, hr *http.Request) reply {
	var out []any
	for _, rv := range r.fb.reviews[n] {
		out = append(out, s.reviewJSON(r, n, rv))
	}
	return s.page(hr, out)
}

// listCode is GET …/pulls/{index}/reviews/{id}/comments (not paged).
func (s *Server) listCode(r *repo, n int, id string) reply {
	for _, rv := range r.fb.reviews[n] {
		if strconv.FormatInt(rv.id, 10) == id {
			out := []any{}
			for _, c := range rv.code {
				out = append(out, s.codeJSON(r, n, c))
			}
			return reply{status: http.StatusOK, body: out}
		}
	}
	return s.message(http.StatusNotFound, "review does not exist")
}

type newReview struct {
	Event    string `json:"event"`
	Body     string `json:"body"`
	CommitID string `json:"commit_id"`
	Comments []struct {
		Path        string `json:"path"`
		Body        string `json:"body"`
		OldPosition int    `json:"old_position"`
		NewPosition int    `json:"new_position"`
	} `json:"comments"`
}

// createReview is POST …/pulls/{index}/reviews: event APPROVED,
// REQUEST_CHANGES or COMMENT (empty: PENDING), with code comments.
func (s *Server) createReview(r *repo, n int, body []byte) reply {
	var nr newReview
	if err := decode(body, &nr); err != nil {
		return s.badJSON(err)
	}
	state := nr.Event
	switch state {
	case "":
		state = "PENDING"
	case "APPROVED", "REQUEST_CHANGES", "COMMENT", "PENDING":
	default:
		return s.message(http.StatusUnprocessableEntity, fmt.Sprintf("Unknown review event: %s", nr.Event))
	}
	if state != "APPROVED" && nr.Body == "" && len(nr.Comments) == 0 {
		return s.message(http.StatusUnprocessableEntity, "review event COMMENT requires a body or a comment")
	}
	rv := s.addReview(r, n, s.login, state, nr.Body)
	for _, c := range nr.Comments {
		line, old := c.NewPosition, false
		if line == 0 {
			line, old = c.OldPosition, true
		}
		s.addCode(rv, s.login, c.Path, line, old, "", c.Body)
	}
	return reply{status: http.StatusOK, body: s.reviewJSON(r, n, rv)}
}

// reply is POST …/pulls/{index}/comments/{id}/replies (Gitea's newest
// versions): a comment in the conversation of comment id.
func (s *Server) reply(r *repo, n int, id string, body []byte) reply {
	var nc struct {
		Body string `json:"body"`
	}
	if err := decode(body, &nc); err != nil || nc.Body == "" {
		return s.message(http.StatusUnprocessableEntity, "[Body]: Required")
	}
	cid, _ := strconv.ParseInt(id, 10, 64)
	rv, to := s.findCode(r, n, cid)
	if to == nil {
		return s.message(http.StatusNotFound, "comment does not exist")
	}
	c := s.addCode(rv, s.login, to.Path, to.Line, to.OldSide, to.Hunk, nc.Body)
	return reply{status: http.StatusCreated, body: s.codeJSON(r, n, c)}
}

// listComments is GET …/issues/{index}/comments: every conversation
// comment updated at or after since (and before before), not paged.
func (s *Server) listComments(r *repo, n int, hr *http.Request) reply {
	q := hr.URL.Query()
	var since, before time.Time
	for k, t := range map[string]*time.Time{"since": &since, "before": &before} {
		if v := q.Get(k); v != "" {
			parsed, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return s.message(http.StatusUnprocessableEntity, fmt.Sprintf("invalid %s: %v", k, err))
			}
			*t = parsed
		}
	}
	out := []any{}
	for _, c := range r.fb.comments[n] {
		if !since.IsZero() && c.Updated.Before(since) || !before.IsZero() && !c.Updated.Before(before) {
			continue
		}
		out = append(out, s.commentJSON(r, n, c))
	}
	return reply{status: http.StatusOK, body: out}
}

// timeline is GET …/issues/{index}/timeline: the comments and the close
// event (type "close", by who closed it), since and paged as Gitea has it.
func (s *Server) timeline(r *repo, n int, hr *http.Request) reply {
	since, _ := time.Parse(time.RFC3339, hr.URL.Query().Get("since"))
	var out []any
	for _, c := range r.fb.comments[n] {
		if !c.Updated.Before(since) {
			ev := s.commentJSON(r, n, c)
			ev["type"] = "comment"
			out = append(out, ev)
		}
	}
	if p := s.pull(r, n); p.State == "closed" && !p.closedAt.Before(since) {
		kind := "close"
		if p.Merged {
			kind = "merge_pull"
		}
		out = append(out, map[string]any{"id": p.closeEvent, "type": kind, "user": s.userJSON(p.ClosedBy), "body": "",
			"created_at": p.closedAt, "updated_at": p.closedAt})
	}
	return s.page(hr, out)
}

// createComment is POST …/issues/{index}/comments: the body is bound
// (422) before the issue is looked up (404).
func (s *Server) createComment(r *repo, index string, body []byte) reply {
	var nc struct {
		Body string `json:"body"`
	}
	if err := decode(body, &nc); err != nil || nc.Body == "" {
		return s.message(http.StatusUnprocessableEntity, "[Body]: Required")
	}
	n, err := strconv.Atoi(index)
	if err != nil || s.pull(r, n) == nil {
		return s.message(http.StatusNotFound, "issue does not exist")
	}
	c := s.addComment(r, n, s.login, nc.Body)
	return reply{status: http.StatusCreated, body: s.commentJSON(r, n, c)}
}

// statusRank orders states as Gitea's combined state takes the worst.
var statusRank = map[string]int{"success": 1, "warning": 2, "pending": 3, "failure": 4, "error": 5}

// combinedStatus is GET …/commits/{ref}/status: the newest status of
// each context, and the worst of their states.
func (s *Server) combinedStatus(r *repo, ref string, hr *http.Request) reply {
	sha := ref
	if b := branchSHA(r.gitDir, ref); b != "" {
		sha = b
	}
	latest := map[string]*status{}
	var order []string
	for _, st := range r.fb.statuses[sha] {
		if latest[st.context] == nil {
			order = append(order, st.context)
		}
		latest[st.context] = st
	}
	state, list := "", []any{}
	for _, ctx := range order {
		st := latest[ctx]
		if statusRank[st.state] > statusRank[state] {
			state = st.state
		}
		list = append(list, map[string]any{"id": st.id, "status": st.state, "target_url": st.target, "description": st.description,
			"url": "", "context": st.context, "creator": s.userJSON("ci"), "created_at": st.created, "updated_at": st.created})
	}
	return reply{status: http.StatusOK, body: map[string]any{"state": state, "sha": sha, "total_count": len(list), "statuses": list,
		"repository": s.repoJSON(r), "commit_url": "", "url": ""}}
}

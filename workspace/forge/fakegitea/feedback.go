package fakegitea

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// feedback is what people and CI wrote on a repository's pull requests.
type feedback struct {
	reviews  map[int][]*review    // by pull request number, oldest first
	comments map[int][]*Comment   // issue (conversation) comments by number
	statuses map[string][]*status // commit statuses by sha, oldest first
}

func newFeedback() feedback {
	return feedback{reviews: map[int][]*review{}, comments: map[int][]*Comment{}, statuses: map[string][]*status{}}
}

type review struct {
	id        int64
	dismissed bool
	author    string
	state     string // APPROVED, PENDING, COMMENT, REQUEST_CHANGES, REQUEST_REVIEW
	body      string
	submitted time.Time
	code      []*CodeComment
}

// CodeComment is a review comment on a line of the diff. In Gitea every
// one belongs to a review; a reply in its conversation joins the review
// of the comment it answers, at the same path and line.
type CodeComment struct {
	ID, ReviewID int64
	Author       string
	Path         string
	Line         int  // in the new file; OldSide: in the old one
	OldSide      bool // on a removed line
	Hunk, Body   string
	Created      time.Time
}

// Comment is a comment on the pull request's conversation.
type Comment struct {
	ID               int64
	Author, Body     string
	Created, Updated time.Time
}

type status struct {
	id                                  int64
	context, state, description, target string
	created                             time.Time
}

// SetPermission gives login a permission on every repository: read,
// write, admin or owner (none: not a user).
func (s *Server) SetPermission(login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[login] = permission
}

// AddInline adds a review comment by author on path:line; replyTo (a
// comment id, or 0) puts it in that comment's review and conversation,
// else it is a single comment: a review of state COMMENT holding it.
func (s *Server) AddInline(fullName string, number int, author, path string, line int, hunk, body string, replyTo int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[fullName]
	s.know(author)
	if replyTo != 0 {
		if rv, to := s.findCode(r, number, replyTo); to != nil {
			return s.addCode(rv, author, to.Path, to.Line, to.OldSide, to.Hunk, body).ID
		}
	}
	rv := s.addReview(r, number, author, "COMMENT", "")
	return s.addCode(rv, author, path, line, false, hunk, body).ID
}

// AddReview adds a submitted review; state is Gitea's (APPROVED,
// REQUEST_CHANGES, COMMENT). It returns the review's id.
func (s *Server) AddReview(fullName string, number int, author, state, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.know(author)
	return s.addReview(s.repos[fullName], number, author, state, body).id
}

// AddInlineReview adds a submitted review with state and body holding one
// comment on path:line; it returns the review's and the comment's ids.
func (s *Server) AddInlineReview(fullName string, number int, author, state, body, path string, line int, hunk, comment string) (review, code int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.know(author)
	rv := s.addReview(s.repos[fullName], number, author, state, body)
	return rv.id, s.addCode(rv, author, path, line, false, hunk, comment).ID
}

// DismissReview dismisses review id, as a maintainer does.
func (s *Server) DismissReview(fullName string, number int, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rv := range s.repos[fullName].fb.reviews[number] {
		if rv.id == id {
			rv.dismissed = true
		}
	}
}

// AddComment adds a conversation comment and returns its id.
func (s *Server) AddComment(fullName string, number int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.know(author)
	return s.addComment(s.repos[fullName], number, author, body).ID
}

// AddStatus sets a commit status on sha (state pending, success, error,
// failure or warning); the newest status of a context is the one that
// counts.
func (s *Server) AddStatus(fullName, sha, context, state, description, targetURL string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[fullName]
	s.nextID++
	st := &status{id: s.nextID, context: context, state: state, description: description, target: targetURL, created: s.now()}
	r.fb.statuses[sha] = append(r.fb.statuses[sha], st)
	return st.id
}

// ReviewComments is a copy of number's review comments, oldest first.
func (s *Server) ReviewComments(fullName string, number int) []CodeComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CodeComment
	for _, rv := range s.repos[fullName].fb.reviews[number] {
		for _, c := range rv.code {
			out = append(out, *c)
		}
	}
	return out
}

// Comments is a copy of number's conversation comments, oldest first.
func (s *Server) Comments(fullName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.repos[fullName].fb.comments[number] {
		out = append(out, *c)
	}
	return out
}

// know makes login a user (read permission unless given another).
func (s *Server) know(login string) {
	if _, ok := s.perms[login]; !ok {
		s.perms[login] = "read"
	}
}

func (s *Server) addReview(r *repo, number int, author, state, body string) *review {
	s.reviewID++
	rv := &review{id: s.reviewID, author: author, state: state, body: body, submitted: s.now()}
	r.fb.reviews[number] = append(r.fb.reviews[number], rv)
	return rv
}

func (s *Server) addCode(rv *review, author, path string, line int, old bool, hunk, body string) *CodeComment {
	s.nextID++
	c := &CodeComment{ID: s.nextID, ReviewID: rv.id, Author: author, Path: path, Line: line, OldSide: old, Hunk: hunk, Body: body, Created: s.now()}
	rv.code = append(rv.code, c)
	return c
}

func (s *Server) addComment(r *repo, number int, author, body string) *Comment {
	s.nextID++
	now := s.now()
	c := &Comment{ID: s.nextID, Author: author, Body: body, Created: now, Updated: now}
	r.fb.comments[number] = append(r.fb.comments[number], c)
	if is := r.issue(number); is != nil {
		is.updated = now // as Gitea does: a comment updates its issue
	}
	return c
}

func (s *Server) findCode(r *repo, number int, id int64) (*review, *CodeComment) {
	for _, rv := range r.fb.reviews[number] {
		for _, c := range rv.code {
			if c.ID == id {
				return rv, c
			}
		}
	}
	return nil, nil
}

// routeFeedback serves reviews, review comments, issue comments, commit
// statuses and a collaborator's permission.
func (s *Server) routeFeedback(r *repo, parts []string, hr *http.Request, body []byte) (reply, bool) {
	get, post := hr.Method == http.MethodGet, hr.Method == http.MethodPost
	switch {
	case len(parts) == 3 && parts[0] == "pulls" && parts[2] == "reviews" && get:
		return s.withPull(r, parts[1], func(n int) reply { return s.listReviews(r, n, hr) }), true
	case len(parts) == 3 && parts[0] == "pulls" && parts[2] == "reviews" && post:
		return s.withPull(r, parts[1], func(n int) reply { return s.createReview(r, n, body) }), true
	case len(parts) == 5 && parts[0] == "pulls" && parts[2] == "reviews" && parts[4] == "comments" && get:
		return s.withPull(r, parts[1], func(n int) reply { return s.listCode(r, n, parts[3]) }), true
	case len(parts) == 5 && parts[0] == "pulls" && parts[2] == "comments" && parts[4] == "replies" && post && s.replies:
		return s.withPull(r, parts[1], func(n int) reply { return s.reply(r, n, parts[3], body) }), true
	case len(parts) == 3 && parts[0] == "issues" && parts[2] == "comments" && get:
		return s.withPull(r, parts[1], func(n int) reply { return s.listComments(r, n, hr) }), true
	case len(parts) == 3 && parts[0] == "issues" && parts[2] == "timeline" && get:
		return s.withPull(r, parts[1], func(n int) reply { return s.timeline(r, n, hr) }), true
	case len(parts) == 3 && parts[0] == "issues" && parts[2] == "comments" && post:
		return s.createComment(r, parts[1], body), true
	case len(parts) == 3 && parts[0] == "commits" && parts[2] == "status" && get:
		return s.combinedStatus(r, parts[1], hr), true
	case len(parts) == 3 && parts[0] == "collaborators" && parts[2] == "permission" && get:
		return s.permission(r, parts[1]), true
	case len(parts) == 1 && parts[0] == "assignees" && get:
		return s.assignees(r), true
	}
	return reply{}, false
}

func (s *Server) withPull(r *repo, index string, f func(int) reply) reply {
	n, err := strconv.Atoi(index)
	if err != nil || s.pull(r, n) == nil {
		return s.message(http.StatusNotFound, "pull request does not exist")
	}
	return f(n)
}

// permission is GET …/collaborators/{user}/permission, which Gitea
// answers only to a site or repository admin, or about oneself.
func (s *Server) permission(r *repo, login string) reply {
	if !r.admin && !strings.EqualFold(login, s.login) {
		return s.message(http.StatusForbidden, "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own")
	}
	perm, ok := s.perms[login]
	switch {
	case strings.HasPrefix(r.fullName, login+"/"):
		perm = "owner"
	case strings.EqualFold(login, s.login):
		perm = map[bool]string{true: "admin", false: map[bool]string{true: "write", false: "read"}[r.push]}[r.admin]
	case !ok || perm == "none":
		return s.message(http.StatusNotFound, fmt.Sprintf("user does not exist [uid: 0, name: %s]", login))
	}
	return reply{status: http.StatusOK, body: map[string]any{"permission": perm, "role_name": perm, "user": s.userJSON(login)}}
}

// assignees is GET …/assignees: every user with write access (the owner,
// when a user, included), not paged.
func (s *Server) assignees(r *repo) reply {
	owner, _, _ := strings.Cut(r.fullName, "/")
	out := []any{s.userJSON(owner)}
	if r.push {
		out = append(out, s.userJSON(s.login))
	}
	var logins []string
	for login, perm := range s.perms {
		if perm == "write" || perm == "admin" || perm == "owner" {
			logins = append(logins, login)
		}
	}
	sort.Strings(logins)
	for _, login := range logins {
		out = append(out, s.userJSON(login))
	}
	return reply{status: http.StatusOK, body: out}
}

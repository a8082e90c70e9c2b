package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// feedback is what people and CI left on a repository's pull requests.
type feedback struct {
	nextID   int64
	inline   map[int][]map[string]any // pull number → review comments, oldest first
	reviews  map[int][]map[string]any
	comments map[int][]map[string]any // issue comments
	checks   map[string][]map[string]any
	statuses map[string][]map[string]any // newest first, as GitHub lists them
	logs     map[string]string           // job id → log
}

func (f *feedback) id() int64 {
	if f.inline == nil {
		*f = feedback{nextID: 100, inline: map[int][]map[string]any{}, reviews: map[int][]map[string]any{}, comments: map[int][]map[string]any{},
			checks: map[string][]map[string]any{}, statuses: map[string][]map[string]any{}, logs: map[string]string{}}
	}
	f.nextID++
	return f.nextID
}

func userOrNil(login string) any {
	if login == "" {
		return nil
	}
	return map[string]any{"login": login}
}

// SetPermission is login's permission on every repository: admin,
// maintain, write, read or none.
func (s *Server) SetPermission(login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[login] = permission
}

// Login is the token's own user (GET /user).
func (s *Server) Login() string { return s.login }

func (s *Server) with(fullName string, fn func(r *repo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.repos[fullName])
}

// AddInline adds a review comment by author on path:line of pull n and
// returns its id; inReplyTo 0 starts a thread.
func (s *Server) AddInline(fullName string, n int, author, path string, line int, hunk, body string, inReplyTo int64) (id int64) {
	s.with(fullName, func(r *repo) {
		id = r.fb.id()
		c := map[string]any{"id": id, "user": userOrNil(author), "body": body, "path": path, "line": line, "diff_hunk": hunk,
			"html_url": fmt.Sprintf("%s/%s/pull/%d#discussion_r%d", s.srv.URL, fullName, n, id), "created_at": time.Now().UTC().Format(time.RFC3339)}
		if inReplyTo != 0 {
			c["in_reply_to_id"] = inReplyTo
		}
		r.fb.inline[n] = append(r.fb.inline[n], c)
	})
	return id
}

// AddReview adds a review (APPROVED, CHANGES_REQUESTED, COMMENTED).
func (s *Server) AddReview(fullName string, n int, author, state, body string) (id int64) {
	s.with(fullName, func(r *repo) {
		id = r.fb.id()
		r.fb.reviews[n] = append(r.fb.reviews[n], map[string]any{"id": id, "user": userOrNil(author), "body": body, "state": state,
			"html_url": fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", s.srv.URL, fullName, n, id), "submitted_at": time.Now().UTC().Format(time.RFC3339)})
	})
	return id
}

// AddComment adds a conversation comment.
func (s *Server) AddComment(fullName string, n int, author, body string) (id int64) {
	s.with(fullName, func(r *repo) { id = s.addComment(r, n, author, body) })
	return id
}

func (s *Server) addComment(r *repo, n int, author, body string) int64 {
	id := r.fb.id()
	kind := "pull"
	if r.issue(n) != nil {
		kind = "issues"
	}
	r.fb.comments[n] = append(r.fb.comments[n], map[string]any{"id": id, "user": userOrNil(author), "body": body,
		"html_url": fmt.Sprintf("%s/%s/%s/%d#issuecomment-%d", s.srv.URL, r.fullName, kind, n, id), "created_at": time.Now().UTC().Format(time.RFC3339)})
	return id
}

// AddCheckRun adds a completed check run on sha; an app "github-actions"
// run serves log as its job's log.
func (s *Server) AddCheckRun(fullName, sha, name, app, conclusion, log string) (id int64) {
	s.with(fullName, func(r *repo) {
		id = r.fb.id()
		r.fb.checks[sha] = append(r.fb.checks[sha], map[string]any{"id": id, "name": name, "status": "completed", "conclusion": conclusion,
			"head_sha": sha, "app": map[string]any{"slug": app}, "html_url": fmt.Sprintf("%s/%s/runs/%d", s.srv.URL, fullName, id),
			"output": map[string]any{"title": name + " " + conclusion, "summary": "see the log"}})
		if log != "" {
			r.fb.logs[strconv.FormatInt(id, 10)] = log
		}
	})
	return id
}

// AddStatus adds a commit status on sha (newest first, as listed).
func (s *Server) AddStatus(fullName, sha, context, state, description, target string) (id int64) {
	s.with(fullName, func(r *repo) {
		id = r.fb.id()
		st := map[string]any{"id": id, "context": context, "state": state, "description": description, "target_url": target}
		r.fb.statuses[sha] = append([]map[string]any{st}, r.fb.statuses[sha]...)
	})
	return id
}

// Merge merges pull n as login; ClosePull closes it as login.
func (s *Server) Merge(fullName string, n int, login string) {
	s.with(fullName, func(r *repo) { p := r.pulls[n-1]; p.State, p.MergedBy, p.ClosedBy = "closed", login, login })
}

func (s *Server) ClosePull(fullName string, n int, login string) {
	s.with(fullName, func(r *repo) { p := r.pulls[n-1]; p.State, p.ClosedBy = "closed", login })
}

// RateLimit makes the next authenticated call a 403 with the primary rate
// limit spent until reset, as GitHub answers it.
func (s *Server) RateLimit(reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := message(http.StatusForbidden, "API rate limit exceeded")
	rep.header = http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}
	s.limited = &rep
}

func (s *Server) getPull(r *repo, number string) reply {
	n, err := strconv.Atoi(number)
	if err != nil || n < 1 || n > len(r.pulls) {
		return message(http.StatusNotFound, "Not Found")
	}
	return reply{status: http.StatusOK, body: s.pullJSON(r, r.pulls[n-1])}
}

// routeFeedback serves the endpoints a follow-up reads and writes.
func (s *Server) routeFeedback(r *repo, p []string, hr *http.Request, body []byte) (reply, bool) {
	get := hr.Method == http.MethodGet
	post := hr.Method == http.MethodPost
	num := func(i int) int { n, _ := strconv.Atoi(p[i]); return n }
	pull := func(i int) bool { n := num(i); return n >= 1 && n <= len(r.pulls) }
	switch {
	case len(p) == 2 && p[0] == "issues" && get && pull(1):
		pr := r.pulls[num(1)-1]
		return reply{status: http.StatusOK, body: map[string]any{"number": pr.Number, "state": pr.State, "closed_by": userOrNil(pr.ClosedBy)}}, true
	case len(p) == 3 && p[0] == "pulls" && p[2] == "comments" && get && pull(1):
		return page(hr, r.fb.inline[num(1)]), true
	case len(p) == 3 && p[0] == "pulls" && p[2] == "reviews" && get && pull(1):
		return page(hr, r.fb.reviews[num(1)]), true
	case len(p) == 3 && p[0] == "issues" && p[2] == "comments" && get && pull(1):
		return page(hr, r.fb.comments[num(1)]), true
	case len(p) == 3 && p[0] == "issues" && p[2] == "comments" && post && pull(1):
		text, ok := bodyField(body)
		if !ok {
			return invalid(map[string]any{"resource": "IssueComment", "field": "body", "code": "missing_field"}), true
		}
		id := s.addComment(r, num(1), s.login, text)
		return reply{status: http.StatusCreated, body: map[string]any{"id": id, "body": text}}, true
	case len(p) == 5 && p[0] == "pulls" && p[2] == "comments" && p[4] == "replies" && post && pull(1):
		return s.reply(r, num(1), p[3], body), true
	case len(p) == 3 && p[0] == "collaborators" && p[2] == "permission" && get:
		perm := s.perms[p[1]]
		if perm == "" {
			perm = "read"
		}
		return reply{status: http.StatusOK, body: map[string]any{"permission": permOf(perm), "role_name": perm, "user": userOrNil(p[1])}}, true
	case len(p) == 3 && p[0] == "commits" && p[2] == "check-runs" && get:
		runs := r.fb.checks[p[1]]
		if runs == nil {
			runs = []map[string]any{}
		}
		return reply{status: http.StatusOK, body: map[string]any{"total_count": len(runs), "check_runs": runs}}, true
	case len(p) == 3 && p[0] == "commits" && p[2] == "statuses" && get:
		return page(hr, r.fb.statuses[p[1]]), true
	case len(p) == 4 && p[0] == "actions" && p[1] == "jobs" && p[3] == "logs" && get:
		if _, ok := r.fb.logs[p[2]]; !ok {
			return message(http.StatusNotFound, "Not Found"), true
		}
		return reply{status: http.StatusFound, body: nil, header: http.Header{"Location": {s.srv.URL + "/_logs/" + r.fullName + "/" + p[2]}}}, true
	}
	return reply{}, false
}

// permOf is the permission field GitHub gives for a role: maintain is
// reported as write (role_name keeps it).
func permOf(role string) string {
	if role == "maintain" {
		return "write"
	}
	return role
}

// reply is POST pulls/{n}/comments/{id}/replies: only to a thread's
// first comment, as on GitHub.
func (s *Server) reply(r *repo, n int, to string, body []byte) reply {
	id, _ := strconv.ParseInt(to, 10, 64)
	text, ok := bodyField(body)
	if !ok {
		return invalid(map[string]any{"resource": "PullRequestReviewComment", "field": "body", "code": "missing_field"})
	}
	for _, c := range r.fb.inline[n] {
		if c["id"] == id {
			if c["in_reply_to_id"] != nil {
				return invalid(map[string]any{"resource": "PullRequestReviewComment", "code": "custom", "message": "replies to replies are not supported"})
			}
			nid := r.fb.id()
			nc := map[string]any{"id": nid, "user": userOrNil(s.login), "body": text, "path": c["path"], "line": c["line"], "diff_hunk": c["diff_hunk"],
				"in_reply_to_id": id, "created_at": time.Now().UTC().Format(time.RFC3339)}
			r.fb.inline[n] = append(r.fb.inline[n], nc)
			return reply{status: http.StatusCreated, body: nc}
		}
	}
	return message(http.StatusNotFound, "Not Found")
}

func bodyField(body []byte) (string, bool) {
	var b struct{ Body *string }
	if json.Unmarshal(body, &b) != nil || b.Body == nil || *b.Body == "" {
		return "", false
	}
	return *b.Body, true
}

// page is one page of a list (per_page, default 30, at most 100; page
// from 1) with GitHub's Link header for the next and last pages.
func page(hr *http.Request, all []map[string]any) reply {
	q := hr.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	n, _ := strconv.Atoi(q.Get("page"))
	n = max(n, 1)
	out := []map[string]any{}
	if lo := (n - 1) * per; lo < len(all) {
		out = all[lo:min(lo+per, len(all))]
	}
	rep := reply{status: http.StatusOK, body: out}
	last := max((len(all)+per-1)/per, 1)
	if n < last {
		link := func(p int, rel string) string {
			u := url.URL{Scheme: "http", Host: hr.Host, Path: hr.URL.Path}
			v := url.Values{"per_page": {strconv.Itoa(per)}, "page": {strconv.Itoa(p)}}
			u.RawQuery = v.Encode()
			return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
		}
		rep.header = http.Header{"Link": {strings.Join([]string{link(n+1, "next"), link(last, "last")}, ", ")}}
	}
	return rep
}

// logBlob serves a job's log at its signed URL.
func (s *Server) logBlob(path string) reply {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || s.repos[path[:i]] == nil {
		return message(http.StatusNotFound, "Not Found")
	}
	log, ok := s.repos[path[:i]].fb.logs[path[i+1:]]
	if !ok {
		return message(http.StatusNotFound, "Not Found")
	}
	return reply{status: http.StatusOK, raw: []byte(log)}
}

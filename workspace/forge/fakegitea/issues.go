package fakegitea

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// firstIssue is the fake's first issue number: Gitea numbers issues and
// pull requests in one sequence; the fake keeps issues apart from the
// pull requests (numbered from 1) instead.
const firstIssue = 1001

// issue is one issue the fake holds, with its timeline's label,
// assignment and close events.
type issue struct {
	number           int
	author           string
	title, body      string
	state            string
	labels           []string
	assignees        []string
	created, updated time.Time
	events           []map[string]any
}

// AddIssue opens an issue by author and returns its number.
func (s *Server) AddIssue(fullName, author, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[fullName]
	now := s.now()
	is := &issue{number: firstIssue + len(r.issues), author: author, title: title, body: body, state: "open", created: now, updated: now}
	r.issues = append(r.issues, is)
	return is.number
}

// Label adds label to issue n as actor: a "label" timeline event whose
// body is "1" (added), as Gitea writes it.
func (s *Server) Label(fullName string, n int, label, actor string) {
	s.onIssue(fullName, n, func(is *issue) {
		is.labels = append(is.labels, label)
		s.event(is, "label", actor, map[string]any{"label": map[string]any{"id": len(label), "name": label, "color": "ededed"}, "body": "1"})
	})
}

// Assign assigns issue n to assignee as actor: an "assignees" event.
func (s *Server) Assign(fullName string, n int, assignee, actor string) {
	s.onIssue(fullName, n, func(is *issue) {
		is.assignees = append(is.assignees, assignee)
		s.event(is, "assignees", actor, map[string]any{"assignee": s.userJSON(assignee), "removed_assignee": false})
	})
}

// CloseIssue closes issue n as actor: a "close" event.
func (s *Server) CloseIssue(fullName string, n int, actor string) {
	s.onIssue(fullName, n, func(is *issue) {
		is.state = "closed"
		s.event(is, "close", actor, nil)
	})
}

func (s *Server) onIssue(fullName string, n int, fn func(is *issue)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repos[fullName].issue(n); is != nil {
		fn(is)
	}
}

func (r *repo) issue(n int) *issue {
	if i := n - firstIssue; r != nil && i >= 0 && i < len(r.issues) {
		return r.issues[i]
	}
	return nil
}

// event adds a timeline event; comments and events share one sequence of
// ids, as in Gitea. The issue's updated_at moves with it.
func (s *Server) event(is *issue, kind, actor string, extra map[string]any) {
	s.nextID++
	now := s.now()
	e := map[string]any{"id": s.nextID, "type": kind, "user": s.userJSON(actor), "body": "", "created_at": now, "updated_at": now}
	for k, v := range extra {
		e[k] = v
	}
	is.events = append(is.events, e)
	is.updated = now
}

func (s *Server) issueJSON(r *repo, is *issue) map[string]any {
	labels, assignees := []any{}, []any{}
	for _, l := range is.labels {
		labels = append(labels, map[string]any{"id": len(l), "name": l, "color": "ededed"})
	}
	for _, a := range is.assignees {
		assignees = append(assignees, s.userJSON(a))
	}
	return map[string]any{"id": 5000 + is.number, "number": is.number, "title": is.title, "body": is.body, "state": is.state,
		"user": s.userJSON(is.author), "labels": labels, "assignees": assignees, "pull_request": nil, "comments": len(r.fb.comments[is.number]),
		"html_url":   fmt.Sprintf("%s/%s/issues/%d", s.srv.URL, r.fullName, is.number),
		"url":        fmt.Sprintf("%s/api/v1/repos/%s/issues/%d", s.srv.URL, r.fullName, is.number),
		"created_at": is.created, "updated_at": is.updated}
}

// routeIssues serves what automations read and write: the issue list
// (state, type, labels, assigned_by, since), an issue, its timeline, a
// comment on it, and a branch.
func (s *Server) routeIssues(r *repo, parts []string, hr *http.Request, body []byte) (reply, bool) {
	get := hr.Method == http.MethodGet
	var is *issue
	if len(parts) >= 2 && parts[0] == "issues" {
		n, _ := strconv.Atoi(parts[1])
		is = r.issue(n)
	}
	switch {
	case len(parts) == 1 && parts[0] == "issues" && get:
		return s.listIssues(r, hr), true
	case len(parts) == 2 && is != nil && get:
		return reply{status: http.StatusOK, body: s.issueJSON(r, is)}, true
	case len(parts) == 3 && is != nil && parts[2] == "timeline" && get:
		since, _ := time.Parse(time.RFC3339, hr.URL.Query().Get("since"))
		var out []any
		for _, c := range r.fb.comments[is.number] {
			if !c.Updated.Before(since) {
				ev := s.commentJSON(r, is.number, c)
				ev["type"] = "comment"
				out = append(out, ev)
			}
		}
		for _, e := range is.events {
			if !e["created_at"].(time.Time).Before(since) {
				out = append(out, e)
			}
		}
		slices.SortFunc(out, func(a, b any) int { return int(a.(map[string]any)["id"].(int64) - b.(map[string]any)["id"].(int64)) })
		return s.page(hr, out), true
	case len(parts) == 3 && is != nil && parts[2] == "comments" && get:
		return s.listComments(r, is.number, hr), true // all of them: Gitea does not page this list
	case len(parts) == 3 && is != nil && parts[2] == "comments" && hr.Method == http.MethodPost:
		var nc struct {
			Body string `json:"body"`
		}
		if err := decode(body, &nc); err != nil || nc.Body == "" {
			return s.message(http.StatusUnprocessableEntity, "[Body]: Required"), true
		}
		c := s.addComment(r, is.number, s.login, nc.Body)
		is.updated = c.Updated
		return reply{status: http.StatusCreated, body: s.commentJSON(r, is.number, c)}, true
	case len(parts) >= 2 && parts[0] == "branches" && get:
		name := strings.Join(parts[1:], "/")
		sha := branchSHA(r.gitDir, name)
		if sha == "" {
			return s.message(http.StatusNotFound, "branch does not exist [name: "+name+"]"), true
		}
		return reply{status: http.StatusOK, body: map[string]any{"name": name, "commit": map[string]any{"id": sha, "message": ""}, "protected": false}}, true
	}
	return reply{}, false
}

// listIssues is GET …/issues: type issues (the fake's pull requests are
// never listed), state open (default), closed or all, every label of
// labels, assigned_by, updated at or after since; newest first, paged.
func (s *Server) listIssues(r *repo, hr *http.Request) reply {
	q := hr.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	since, _ := time.Parse(time.RFC3339, q.Get("since"))
	var out []any
	for _, is := range slices.Backward(r.issues) {
		if state != "all" && is.state != state || is.updated.Before(since) || q.Get("type") == "pulls" {
			continue
		}
		if who := q.Get("assigned_by"); who != "" && !slices.Contains(is.assignees, who) {
			continue
		}
		if labels := q.Get("labels"); labels != "" && !hasAll(is.labels, strings.Split(labels, ",")) {
			continue
		}
		out = append(out, s.issueJSON(r, is))
	}
	return s.page(hr, out)
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

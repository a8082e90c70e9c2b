package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// firstIssue is the fake's first issue number: GitHub numbers issues and
// pull requests in one sequence; the fake keeps issues apart from the
// pull requests (numbered from 1) instead.
const firstIssue = 1001

// issue is one issue the fake holds.
type issue struct {
	number      int
	author      string
	title, body string
	state       string
	labels      []string
	assignees   []string
	pull        bool // a pull request's issue side
}

// AddIssue opens an issue by author and returns its number.
func (s *Server) AddIssue(fullName, author, title, body string) (n int) {
	s.with(fullName, func(r *repo) {
		n = firstIssue + len(r.issues)
		r.issues = append(r.issues, &issue{number: n, author: author, title: title, body: body, state: "open"})
	})
	return n
}

// Label adds label to issue n as actor, with its labeled event; n may be
// a pull request's number: GitHub lists its events among the issues',
// the issue marked with pull_request.
func (s *Server) Label(fullName string, n int, label, actor string) {
	s.with(fullName, func(r *repo) {
		is := r.issue(n)
		if is == nil && n >= 1 && n <= len(r.pulls) {
			p := r.pulls[n-1]
			is = &issue{number: n, title: p.Title, body: p.Body, state: p.State, pull: true}
		}
		is.labels = append(is.labels, label)
		s.event(r, is, "labeled", actor, map[string]any{"label": map[string]any{"name": label, "color": "ededed"}})
	})
}

// Assign assigns issue n to assignee as actor, with its assigned event.
func (s *Server) Assign(fullName string, n int, assignee, actor string) {
	s.with(fullName, func(r *repo) {
		is := r.issue(n)
		is.assignees = append(is.assignees, assignee)
		s.event(r, is, "assigned", actor, map[string]any{"assignee": userOrNil(assignee)})
	})
}

// CloseIssue closes issue n as actor, with its closed event.
func (s *Server) CloseIssue(fullName string, n int, actor string) {
	s.with(fullName, func(r *repo) {
		is := r.issue(n)
		is.state = "closed"
		s.event(r, is, "closed", actor, nil)
	})
}

func (r *repo) issue(n int) *issue {
	if i := n - firstIssue; i >= 0 && i < len(r.issues) {
		return r.issues[i]
	}
	return nil
}

// event records an issue event, as GET issues/events lists it (the issue
// embedded as it is when the event happens).
func (s *Server) event(r *repo, is *issue, kind, actor string, extra map[string]any) {
	e := map[string]any{"id": r.fb.id(), "event": kind, "actor": userOrNil(actor), "created_at": time.Now().UTC().Format(time.RFC3339),
		"issue": s.issueJSON(r, is)}
	for k, v := range extra {
		e[k] = v
	}
	r.events = append(r.events, e)
}

func (s *Server) issueJSON(r *repo, is *issue) map[string]any {
	labels := []map[string]any{}
	for _, l := range is.labels {
		labels = append(labels, map[string]any{"name": l})
	}
	assignees := []any{}
	for _, a := range is.assignees {
		assignees = append(assignees, userOrNil(a))
	}
	out := map[string]any{"id": 5000 + is.number, "number": is.number, "title": is.title, "body": is.body, "state": is.state,
		"user": userOrNil(is.author), "labels": labels, "assignees": assignees, "comments": len(r.fb.comments[is.number]),
		"html_url": fmt.Sprintf("%s/%s/issues/%d", s.srv.URL, r.fullName, is.number),
		"url":      fmt.Sprintf("%s/repos/%s/issues/%d", s.srv.URL, r.fullName, is.number)}
	if is.pull {
		out["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/repos/%s/pulls/%d", s.srv.URL, r.fullName, is.number)}
	}
	return out
}

// routeIssues serves the issue endpoints automations read and write:
// the repository's issue events (newest first), an issue, its comments
// (oldest first, paged) and a new one, and a branch.
func (s *Server) routeIssues(r *repo, p []string, hr *http.Request, body []byte) (reply, bool) {
	get := hr.Method == http.MethodGet
	var is *issue
	if len(p) >= 2 && p[0] == "issues" {
		n, _ := strconv.Atoi(p[1])
		is = r.issue(n)
	}
	switch {
	case len(p) == 2 && p[0] == "issues" && p[1] == "events" && get:
		return page(hr, newestFirst(r.events)), true
	case len(p) == 2 && is != nil && get:
		return reply{status: http.StatusOK, body: s.issueJSON(r, is)}, true
	case len(p) == 3 && is != nil && p[2] == "comments" && get:
		return page(hr, r.fb.comments[is.number]), true
	case len(p) == 3 && is != nil && p[2] == "comments" && hr.Method == http.MethodPost:
		text, ok := bodyField(body)
		if !ok {
			return invalid(map[string]any{"resource": "IssueComment", "field": "body", "code": "missing_field"}), true
		}
		id := s.addComment(r, is.number, s.login, text)
		return reply{status: http.StatusCreated, body: map[string]any{"id": id, "body": text}}, true
	case len(p) >= 2 && p[0] == "branches" && get:
		name := strings.Join(p[1:], "/")
		sha := branchSHA(r.gitDir, name)
		if sha == "" {
			return message(http.StatusNotFound, "Branch not found"), true
		}
		return reply{status: http.StatusOK, body: map[string]any{"name": name, "commit": map[string]any{"sha": sha}}}, true
	}
	return reply{}, false
}

func newestFirst(events []map[string]any) []map[string]any {
	out := slices.Clone(events)
	slices.Reverse(out)
	return out
}

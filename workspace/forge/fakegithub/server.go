// Package fakegithub is an in-process fake of GitHub's REST API for tests,
// behind a real socket: the repository and pull request endpoints h9 uses,
// checking the token and the JSON as GitHub does (401 for a bad token, 422
// for an invalid pull request or a second open one on the same head). A
// pull request's branches are checked against a real bare git repository,
// so a pull request for a branch nobody pushed is refused.
package fakegithub

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
)

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	repos    map[string]*repo // by owner/name
	requests []Request
	login    string            // the token's user
	perms    map[string]string // login → permission (admin, maintain, write, read)
	limited  *reply            // the next authenticated call's answer (RateLimit)
}

type repo struct {
	fullName string
	gitDir   string // the bare repository behind it
	push     bool
	pulls    []*Pull
	fb       feedback
	issues   []*issue         // numbered from firstIssue
	events   []map[string]any // issue events, oldest first
}

// Pull is a pull request the fake holds.
type Pull struct {
	Number            int
	Title, Body       string
	Head, Base, State string
	MergedBy          string // set by Merge
	ClosedBy          string // set by Merge and Close
}

// Request is one call the fake answered.
type Request struct {
	Method, Path, Query, Auth string
	Body                      []byte
	Status                    int
}

// New starts a fake GitHub that accepts token.
func New(token string) *Server {
	s := &Server{token: token, repos: map[string]*repo{}, login: "h9-bot", perms: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the API's base URL, ending in "/".
func (s *Server) URL() string { return s.srv.URL + "/" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// AddRepo serves owner/name, backed by the bare repository gitDir; push
// is the token's permission there.
func (s *Server) AddRepo(fullName, gitDir string, push bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName] = &repo{fullName: fullName, gitDir: gitDir, push: push}
}

// Pulls is a copy of owner/name's pull requests, in the order opened.
func (s *Server) Pulls(fullName string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pull
	if r := s.repos[fullName]; r != nil {
		for _, p := range r.pulls {
			out = append(out, *p)
		}
	}
	return out
}

// Requests is every call answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// reply is an answer: a status and a JSON body.
type reply struct {
	status int
	body   any
	header http.Header // extra headers (Link, Location, rate limits)
	raw    []byte      // a body that is not JSON (job logs)
}

func message(status int, msg string) reply {
	return reply{status: status, body: map[string]any{"message": msg}}
}

func invalid(errs ...map[string]any) reply {
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{"message": "Validation Failed", "errors": errs,
		"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}}
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := readBody(hr)
	s.mu.Lock()
	rep := s.route(hr, body)
	s.requests = append(s.requests, Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery,
		Auth: hr.Header.Get("Authorization"), Body: body, Status: rep.status})
	s.mu.Unlock()
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if rep.raw != nil {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(rep.status)
		w.Write(rep.raw)
		return
	}
	data, _ := json.Marshal(rep.body)
	if hr.Method == http.MethodGet && rep.status == http.StatusOK {
		// GitHub's ETag is a digest of the answer; the same answer to an
		// If-None-Match is a 304 without a body.
		etag := fmt.Sprintf(`W/"%x"`, sha256.Sum256(data))
		w.Header().Set("ETag", etag)
		if hr.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			s.mu.Lock()
			s.requests[len(s.requests)-1].Status = http.StatusNotModified
			s.mu.Unlock()
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(rep.status)
	w.Write(data)
}

// route checks the token, then finds the repository and the endpoint.
func (s *Server) route(hr *http.Request, body []byte) reply {
	if log, ok := strings.CutPrefix(hr.URL.Path, "/_logs/"); ok { // the signed blob URL: no token
		return s.logBlob(log)
	}
	auth := hr.Header.Get("Authorization")
	if auth != "Bearer "+s.token && auth != "token "+s.token {
		return message(http.StatusUnauthorized, "Bad credentials")
	}
	if s.limited != nil {
		rep := *s.limited
		s.limited = nil
		return rep
	}
	if hr.URL.Path == "/user" && hr.Method == http.MethodGet {
		return reply{status: http.StatusOK, body: map[string]any{"login": s.login, "id": 1, "type": "Bot"}}
	}
	parts := strings.Split(strings.Trim(hr.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[0] != "repos" {
		return message(http.StatusNotFound, "Not Found")
	}
	r := s.repos[parts[1]+"/"+parts[2]]
	if r == nil {
		return message(http.StatusNotFound, "Not Found")
	}
	switch {
	case len(parts) == 3 && hr.Method == http.MethodGet:
		return reply{status: http.StatusOK, body: s.repoJSON(r)}
	case len(parts) == 4 && parts[3] == "pulls" && hr.Method == http.MethodGet:
		return s.list(r, hr)
	case len(parts) == 4 && parts[3] == "pulls" && hr.Method == http.MethodPost:
		return s.create(r, body)
	case len(parts) == 5 && parts[3] == "pulls" && hr.Method == http.MethodPatch:
		return s.edit(r, parts[4], body)
	case len(parts) == 5 && parts[3] == "pulls" && hr.Method == http.MethodGet:
		return s.getPull(r, parts[4])
	}
	if rep, ok := s.routeIssues(r, parts[3:], hr, body); ok {
		return rep
	}
	if rep, ok := s.routeFeedback(r, parts[3:], hr, body); ok {
		return rep
	}
	return message(http.StatusNotFound, "Not Found")
}

func (s *Server) repoJSON(r *repo) map[string]any {
	owner, name, _ := strings.Cut(r.fullName, "/")
	return map[string]any{"id": 1, "name": name, "full_name": r.fullName, "owner": map[string]any{"login": owner},
		"default_branch": "main", "permissions": map[string]bool{"admin": false, "push": r.push, "pull": true}}
}

func (s *Server) pullJSON(r *repo, p *Pull) map[string]any {
	owner, _, _ := strings.Cut(r.fullName, "/")
	return map[string]any{
		"id": 1000 + p.Number, "number": p.Number, "state": p.State, "title": p.Title, "body": p.Body,
		"html_url": fmt.Sprintf("%s/%s/pull/%d", s.srv.URL, r.fullName, p.Number),
		"url":      fmt.Sprintf("%s/repos/%s/pulls/%d", s.srv.URL, r.fullName, p.Number),
		"head":     map[string]any{"ref": p.Head, "label": owner + ":" + p.Head, "sha": branchSHA(r.gitDir, p.Head)},
		"base":     map[string]any{"ref": p.Base, "label": owner + ":" + p.Base},
		"merged":   p.MergedBy != "", "merged_by": userOrNil(p.MergedBy),
	}
}

// branchSHA is the branch's commit in the bare repository, "" if none.
func branchSHA(gitDir, branch string) string {
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Package fakegitlab is an in-process fake of GitLab's REST API (v4) for
// tests, behind a real socket, written from GitLab's API documentation:
// projects addressed by id or URL-encoded path (group%2Fsub%2Fname),
// PRIVATE-TOKEN or Authorization: Bearer, offset pagination (X-Page,
// X-Per-Page, X-Total, X-Total-Pages, X-Next-Page, X-Prev-Page and a Link
// header), GitLab's error bodies ({"message":"404 Project Not Found"},
// 401 for a bad token, 403 for a missing right, 409 for a second open
// merge request on a branch, 403 insufficient_scope for a token without
// the api scope) and 429 with RateLimit-* and Retry-After.
// A merge request's branches and diffs come from a real bare git
// repository, so a merge request for a branch nobody pushed is refused.
// Like GitLab's API it ignores If-None-Match: every read is a 200.
package fakegitlab

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Access levels, as GitLab numbers them.
const (
	NoAccess   = 0
	Guest      = 10
	Reporter   = 20
	Developer  = 30
	Maintainer = 40
	Owner      = 50
)

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	nextID   int64
	projects map[string]*project // by path
	users    map[string]*user    // by username
	login    string              // the token's user
	scopes   []string            // the token's scopes (GET /personal_access_tokens/self)
	limited  *reply              // the next authenticated call's answer (RateLimit)
	requests []Request
	gitUsers []string
}

type user struct {
	id       int64
	username string
	access   int // on every project, unless the project says otherwise
}

// Request is one call the fake answered.
type Request struct {
	Method, Path, Query string
	Token               string // the token as sent, in either header
	Body                []byte
	Status              int
}

// New starts a fake GitLab that accepts token, owned by the user h9-bot
// with the api scope.
func New(token string) *Server {
	s := &Server{token: token, nextID: 1000, projects: map[string]*project{}, users: map[string]*user{}, login: "h9-bot", scopes: []string{"api"}}
	s.userNamed(s.login)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the API's base URL, ending in "/api/v4/".
func (s *Server) URL() string { return s.srv.URL + "/api/v4/" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Login is the token's own user (GET /user).
func (s *Server) Login() string { return s.login }

// SetScopes sets the token's scopes.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = scopes
}

// SetAccess is username's access level on every project that does not
// set its own (NoAccess, Guest … Owner).
func (s *Server) SetAccess(username string, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userNamed(username).access = level
}

// RateLimit makes the next authenticated call a 429, as GitLab's
// throttle answers it, until reset.
func (s *Server) RateLimit(reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait := max(int(time.Until(reset).Seconds()+0.999), 1)
	s.limited = &reply{status: http.StatusTooManyRequests, raw: []byte("Retry later\n"), header: http.Header{
		"Ratelimit-Name": {"throttle_authenticated_api"}, "Ratelimit-Limit": {"2000"}, "Ratelimit-Observed": {"2001"},
		"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)},
		"Ratelimit-Resettime": {reset.UTC().Format(http.TimeFormat)}, "Retry-After": {strconv.Itoa(wait)}}}
}

// Requests is every call answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) hasScope(scope string) bool {
	for _, sc := range s.scopes {
		if sc == scope {
			return true
		}
	}
	return false
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func (s *Server) userNamed(name string) *user {
	u := s.users[name]
	if u == nil {
		u = &user{id: s.id(), username: name}
		s.users[name] = u
	}
	return u
}

func (s *Server) userJSON(name string) any {
	if name == "" {
		return nil
	}
	u := s.userNamed(name)
	return map[string]any{"id": u.id, "username": u.username, "name": u.username, "state": "active",
		"web_url": s.srv.URL + "/" + u.username, "avatar_url": nil}
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if !strings.HasPrefix(hr.URL.Path, "/api/") && s.serveGit(w, hr) {
		return
	}
	body, _ := readBody(hr)
	tok := hr.Header.Get("PRIVATE-TOKEN")
	if b, found := strings.CutPrefix(hr.Header.Get("Authorization"), "Bearer "); found {
		tok = b
	}
	s.mu.Lock()
	rep := s.route(hr, tok, body)
	s.requests = append(s.requests, Request{Method: hr.Method, Path: hr.URL.EscapedPath(), Query: hr.URL.RawQuery, Token: tok, Body: body, Status: rep.status})
	s.mu.Unlock()
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if rep.raw != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(rep.status)
		w.Write(rep.raw)
		return
	}
	data, _ := json.Marshal(rep.body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	w.Write(data)
}

// route checks the token, then finds the endpoint. Paths are read
// escaped: a project path is one segment, its slashes as %2F.
func (s *Server) route(hr *http.Request, tok string, body []byte) reply {
	rest, found := strings.CutPrefix(hr.URL.EscapedPath(), "/api/v4/")
	if !found {
		return notFound()
	}
	if tok != s.token {
		return message(http.StatusUnauthorized, "401 Unauthorized")
	}
	if s.limited != nil {
		rep := *s.limited
		s.limited = nil
		return rep
	}
	get := hr.Method == http.MethodGet
	if !s.hasScope("api") && (!get || !s.hasScope("read_api")) {
		return reply{status: http.StatusForbidden, body: map[string]any{"error": "insufficient_scope",
			"error_description": "The request requires higher privileges than provided by the access token.", "scope": "api"}}
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case rest == "user" && get:
		u := s.userNamed(s.login)
		return ok(map[string]any{"id": u.id, "username": u.username, "name": "h9", "state": "active", "bot": true, "is_admin": false})
	case rest == "personal_access_tokens/self" && get:
		return ok(map[string]any{"id": 1, "name": "h9", "active": true, "revoked": false, "scopes": s.scopes, "user_id": s.userNamed(s.login).id})
	case len(parts) >= 2 && parts[0] == "projects":
		ref, err := url.PathUnescape(parts[1])
		if err != nil {
			return notFound()
		}
		p := s.project(ref)
		if p == nil || p.effectiveAccess(s.userNamed(s.login)) == NoAccess {
			return message(http.StatusNotFound, "404 Project Not Found")
		}
		return s.routeProject(p, parts[2:], hr, body)
	}
	return notFound()
}

// project is the project with numeric id or path ref.
func (s *Server) project(ref string) *project {
	if p := s.projects[ref]; p != nil {
		return p
	}
	for _, p := range s.projects {
		if strconv.FormatInt(p.id, 10) == ref {
			return p
		}
	}
	return nil
}

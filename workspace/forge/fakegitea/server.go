// Package fakegitea is an in-process fake of Gitea's REST API (/api/v1,
// which Forgejo speaks too) for tests, behind a real socket, written from
// Gitea's API documentation: `Authorization: token …`, the version
// endpoint the SDK reads first, token scopes (read/write per category),
// page/limit pagination with Link and X-Total-Count, error bodies
// {"message", "url"}, 401 for a bad token, 403 for a missing scope or
// right, 404 for what the token cannot see, 409 for a second open pull
// request on the same head and base, 422 for an invalid body. A pull
// request's branches are checked against a real bare git repository.
package fakegitea

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Version is what GET /api/v1/version answers unless SetVersion says
// otherwise.
const Version = "1.26.1"

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	repos    map[string]*repo // by owner/name
	requests []Request
	login    string            // the token's user
	scopes   map[string]bool   // the token's scopes (SetScopes); nil: all
	perms    map[string]string // login → permission (read, write, admin, owner)
	limited  *reply            // the next authenticated call's answer (RateLimit)
	replies  bool              // the review comment reply endpoint exists (EnableReplies)
	nextID   int64             // comments of every kind share one sequence, as in Gitea
	reviewID int64
	runID    int64
	jobID    int64
	version  string
	gitUsers []string
	clock    time.Time
}

// Request is one call the fake answered.
type Request struct {
	Method, Path, Query, Auth string
	Body                      []byte
	Status                    int
}

// New starts a fake Gitea that accepts token, with every scope.
func New(token string) *Server {
	s := &Server{token: token, repos: map[string]*repo{}, login: "h9-bot", perms: map[string]string{}, version: Version,
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the API's base URL, ending in "/api/v1/" (a repo's forge.api).
func (s *Server) URL() string { return s.srv.URL + "/api/v1/" }

// WebURL is the server's root, where pages and git live.
func (s *Server) WebURL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Login is the token's user.
func (s *Server) Login() string { return s.login }

// SetScopes limits the token to scopes (like "read:repository",
// "write:issue", "read:user"; "all" is every scope).
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = map[string]bool{}
	for _, sc := range scopes {
		s.scopes[sc] = true
	}
}

// EnableReplies serves POST …/pulls/{index}/comments/{id}/replies, which
// only Gitea's newest versions have; without it the route is a 404.
func (s *Server) EnableReplies() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = true
}

// RateLimit makes the next authenticated call a 429 with Retry-After, as
// a rate-limiting proxy in front of Gitea answers.
func (s *Server) RateLimit(retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := s.message(http.StatusTooManyRequests, "rate limit exceeded")
	rep.header = http.Header{"Retry-After": {fmt.Sprint(int(retryAfter.Seconds()))}}
	s.limited = &rep
}

// Requests is every call answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// SetClock sets the fake's clock (it starts on 2 January 2026): a test
// against a poller that keeps only what happened after it started sets it
// to the real time.
func (s *Server) SetClock(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = at.UTC().Truncate(time.Second)
}

// now is the fake's clock: each call moves it a second, so creation
// times are distinct and ordered.
func (s *Server) now() time.Time {
	s.clock = s.clock.Add(time.Second)
	return s.clock
}

// hasActionsAPI: the runs, jobs and job logs endpoints came with Gitea
// 1.26; a Forgejo ("11.0.3+gitea-1.22.0") is judged by the Gitea version
// it names.
func (s *Server) hasActionsAPI() bool {
	v := s.version
	if _, compat, forgejo := strings.Cut(v, "+gitea-"); forgejo {
		v = compat
	}
	var major, minor int
	fmt.Sscanf(v, "%d.%d", &major, &minor)
	return major > 1 || major == 1 && minor >= 26
}

// reply is an answer: a status, a JSON body and extra headers.
type reply struct {
	status int
	body   any
	header http.Header
	raw    []byte // a body that is not JSON (job logs)
}

// message is Gitea's error body: {"message": …, "url": <swagger>}.
func (s *Server) message(status int, msg string) reply {
	return reply{status: status, body: map[string]any{"message": msg, "url": s.srv.URL + "/api/swagger"}}
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if !strings.HasPrefix(hr.URL.Path, "/api/") && s.serveGit(w, hr) {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(hr.Body, 1<<20))
	s.mu.Lock()
	rep := s.route(hr, body)
	s.requests = append(s.requests, Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery,
		Auth: hr.Header.Get("Authorization"), Body: body, Status: rep.status})
	s.mu.Unlock()
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if rep.raw != nil {
		w.Header().Set("Content-Type", "text/plain;charset=utf-8")
		w.WriteHeader(rep.status)
		w.Write(rep.raw)
		return
	}
	if rep.status == http.StatusNoContent {
		w.WriteHeader(rep.status)
		return
	}
	data, _ := json.Marshal(rep.body)
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(rep.status)
	w.Write(data)
}

// route checks the token and its scope, then finds the endpoint.
func (s *Server) route(hr *http.Request, body []byte) reply {
	path, ok := strings.CutPrefix(hr.URL.Path, "/api/v1/")
	if !ok {
		return s.message(http.StatusNotFound, "not found")
	}
	if path == "version" && hr.Method == http.MethodGet && s.version != "" { // served without a token
		return reply{status: http.StatusOK, body: map[string]string{"version": s.version}}
	}
	if auth := hr.Header.Get("Authorization"); auth != "token "+s.token && auth != "Bearer "+s.token {
		return s.message(http.StatusUnauthorized, "user does not exist [uid: 0, name: ]")
	}
	if s.limited != nil {
		rep := *s.limited
		s.limited = nil
		return rep
	}
	parts := segments(hr)
	if rep, refused := s.checkScope(hr.Method, parts); refused {
		return rep
	}
	if path == "user" && hr.Method == http.MethodGet {
		return reply{status: http.StatusOK, body: s.userJSON(s.login)}
	}
	if len(parts) < 3 || parts[0] != "repos" {
		return s.message(http.StatusNotFound, "not found")
	}
	r := s.repos[parts[1]+"/"+parts[2]]
	if r == nil {
		return s.message(http.StatusNotFound, "repository does not exist")
	}
	if len(parts) == 3 && hr.Method == http.MethodGet {
		return reply{status: http.StatusOK, body: s.repoJSON(r)}
	}
	if rep, ok := s.routeIssues(r, parts[3:], hr, body); ok {
		return rep
	}
	if rep, ok := s.routePulls(r, parts[3:], hr, body); ok {
		return rep
	}
	if rep, ok := s.routeFeedback(r, parts[3:], hr, body); ok {
		return rep
	}
	if rep, ok := s.routeActions(r, parts[3:], hr); ok && s.hasActionsAPI() {
		return rep
	}
	return s.message(http.StatusNotFound, "not found")
}

// checkScope is Gitea's token scope check: each route has a category
// (user, issue for /repos/{o}/{r}/issues, else repository); a GET needs
// read, anything else write (which includes read). It runs before a
// body is read, so a write with an empty body tells a missing scope (403)
// from a present one (422).
func (s *Server) checkScope(method string, parts []string) (reply, bool) {
	if s.scopes == nil || s.scopes["all"] {
		return reply{}, false
	}
	category := "repository"
	switch {
	case parts[0] == "user" || parts[0] == "users":
		category = "user"
	case len(parts) > 3 && parts[0] == "repos" && parts[3] == "issues":
		category = "issue"
	}
	need := "write:" + category
	if method == http.MethodGet {
		need = "read:" + category
		if s.scopes["write:"+category] {
			return reply{}, false
		}
	}
	if s.scopes[need] {
		return reply{}, false
	}
	return s.message(http.StatusForbidden, fmt.Sprintf("token does not have at least one of required scope(s), required=[%s], token scope=%s", need, s.scopeList())), true
}

func (s *Server) scopeList() string {
	var l []string
	for sc := range s.scopes {
		l = append(l, sc)
	}
	return strings.Join(l, ",")
}

func (s *Server) userJSON(login string) map[string]any {
	if login == "" {
		return nil
	}
	return map[string]any{"id": len(login), "login": login, "username": login, "full_name": login,
		"email": login + "@noreply.example", "avatar_url": s.srv.URL + "/avatars/" + login}
}

// badJSON is Gitea's answer to a body it cannot bind.
func (s *Server) badJSON(err error) reply {
	return s.message(http.StatusUnprocessableEntity, "[]: "+err.Error())
}

// decode binds body into v, or says why not.
func decode(body []byte, v any) error {
	if len(body) == 0 {
		return fmt.Errorf("empty body")
	}
	return json.Unmarshal(body, v)
}

// segments is the request's path under /api/v1/, split where the client
// put a slash: an escaped one (%2F, as in a branch name) stays inside its
// segment, as Gitea's router has it.
func segments(hr *http.Request) []string {
	escaped := strings.TrimPrefix(hr.URL.EscapedPath(), "/api/v1/")
	parts := strings.Split(strings.Trim(escaped, "/"), "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	return parts
}

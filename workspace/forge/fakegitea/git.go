package fakegitea

import (
	"net/http"
	"strings"

	"github.com/h9-app/h9/workspace/forge/fakegit"
)

// GitURL is the repository's clone URL over HTTP, as Gitea serves it
// (clone_url): http://host/owner/name.git.
func (s *Server) GitURL(fullName string) string { return s.srv.URL + "/" + fullName + ".git" }

// GitUsers is the user name of each authenticated git request, in order.
func (s *Server) GitUsers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gitUsers...)
}

// gitAuth is Gitea's Basic authentication of git over HTTP with an
// access token: the token as the password with any user name, or as the
// user name with an empty password or x-oauth-basic.
func (s *Server) gitAuth(hr *http.Request) (user string, ok bool) {
	user, pass, has := hr.BasicAuth()
	switch {
	case !has:
		return "", false
	case pass == s.token && user != "":
		return user, true
	case user == s.token && (pass == "" || pass == "x-oauth-basic"):
		return s.login, true
	}
	return "", false
}

// serveGit answers git's smart HTTP for /owner/name.git/… through git
// http-backend on the repository's bare directory: 401 with a Basic
// challenge without a valid token; ok is false for a path that is no
// repository's.
func (s *Server) serveGit(w http.ResponseWriter, hr *http.Request) (ok bool) {
	fullName, rest, found := strings.Cut(strings.TrimPrefix(hr.URL.Path, "/"), ".git/")
	if !found {
		return false
	}
	user, authed := s.gitAuth(hr)
	s.mu.Lock()
	r := s.repos[fullName]
	if r != nil && authed {
		s.gitUsers = append(s.gitUsers, user)
	}
	s.mu.Unlock()
	switch {
	case r == nil:
		return false
	case !authed:
		w.Header().Set("WWW-Authenticate", `Basic realm="Gitea"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return true
	case !r.push && strings.Contains(hr.URL.RawQuery+rest, "git-receive-pack"):
		http.Error(w, "User permission denied for writing.", http.StatusForbidden)
		return true
	}
	fakegit.Serve(w, hr, r.gitDir, rest, user)
	return true
}

package fakegitlab

import (
	"net/http"
	"strings"

	"github.com/h9-app/h9/workspace/forge/fakegit"
)

// GitURL is the project's clone URL over HTTP, as GitLab serves it
// (http_url_to_repo): http://host/group/sub/name.git.
func (s *Server) GitURL(path string) string { return s.srv.URL + "/" + path + ".git" }

// GitUsers is the user name of each authenticated git request, in order:
// GitLab takes the token as the password, with oauth2 as the user name
// for OAuth tokens and any name for access tokens.
func (s *Server) GitUsers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gitUsers...)
}

// serveGit answers git's smart HTTP for /group/…/name.git/… through git
// http-backend on the project's bare repository: 401 with a Basic
// challenge without the token, 404 for a project the token's user cannot
// see, 403 for a push below Developer or without the api or
// write_repository scope; ok is false for a path that is no project's
// repository.
func (s *Server) serveGit(w http.ResponseWriter, hr *http.Request) (ok bool) {
	path, rest, found := strings.Cut(strings.TrimPrefix(hr.URL.Path, "/"), ".git/")
	if !found {
		return false
	}
	user, pass, hasAuth := hr.BasicAuth()
	s.mu.Lock()
	p := s.projects[path]
	var gitDir string
	push := strings.Contains(rest, "git-receive-pack") || hr.URL.Query().Get("service") == "git-receive-pack"
	visible := p != nil && p.effectiveAccess(s.userNamed(s.login)) > NoAccess
	mayPush := visible && p.effectiveAccess(s.userNamed(s.login)) >= Developer && (s.hasScope("api") || s.hasScope("write_repository"))
	if p != nil {
		gitDir = p.gitDir
	}
	if hasAuth && pass == s.token {
		s.gitUsers = append(s.gitUsers, user)
	}
	s.mu.Unlock()
	switch {
	case p == nil:
		return false
	case !hasAuth || pass != s.token || user == "":
		w.Header().Set("WWW-Authenticate", `Basic realm="GitLab"`)
		http.Error(w, "HTTP Basic: Access denied", http.StatusUnauthorized)
		return true
	case !visible:
		http.Error(w, "The project you were looking for could not be found.", http.StatusNotFound)
		return true
	case push && !mayPush:
		http.Error(w, "You are not allowed to push code to this project.", http.StatusForbidden)
		return true
	}
	fakegit.Serve(w, hr, gitDir, rest, user)
	return true
}

// Package fakegit serves a bare repository over git's smart HTTP for the
// fake forges, through git http-backend: each fake decides who may read
// or push, then hands the request here.
package fakegit

import (
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"strings"
)

// Serve answers one git request for the bare repository gitDir: rest is
// the path after "<repository>.git/", user the name git http-backend
// sees as REMOTE_USER.
func Serve(w http.ResponseWriter, r *http.Request, gitDir, rest, user string) {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(gitDir), "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + user},
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = "/"+filepath.Base(gitDir)+"/"+rest, ""
	backend.ServeHTTP(w, r2)
}

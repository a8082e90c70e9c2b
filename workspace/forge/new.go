package forge

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// New is the client of p's forge, with token; hc nil means
// http.DefaultClient.
func New(p Project, token string, hc *http.Client) (Client, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	base, err := url.Parse(p.API)
	if err != nil || base.Host == "" || (base.Scheme != "https" && base.Scheme != "http") || !strings.HasSuffix(base.Path, "/") {
		return nil, fmt.Errorf("%w: the %s API URL %q must be an http(s) URL ending in /", ErrAPI, p.Kind.Title(), p.API)
	}
	if token == "" {
		return nil, fmt.Errorf("%w: no %s token: %s is empty", ErrAPI, p.Kind.Title(), p.TokenEnv)
	}
	switch p.Kind {
	case GitHub:
		return newGitHub(p, token, base, hc), nil
	case GitLab:
		return newGitLab(p, token, hc)
	case Gitea:
		return newGitea(p, token, hc)
	}
	return nil, fmt.Errorf("%w: unknown forge type %q", ErrAPI, p.Kind)
}

// Supported reports whether h9 has a client for kind yet (each client's
// file says whether it is complete).
func Supported(k Kind) bool {
	return k == GitHub || (k == GitLab && gitlabBuilt) || (k == Gitea && giteaBuilt)
}

// tail is the last n lines of a log.
func tail(log string, n int) string {
	log = strings.TrimRight(log, "\n")
	lines := strings.Split(log, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogLines is how much of a failed job's log a Check carries.
const LogLines = 200

package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// tokenFD is the descriptor on which the credential helper finds
// H9_GITHUB_TOKEN: the read end of a pipe h9 fills and closes before git
// starts, inherited by git, git-remote-https and the helper. The token is
// never in any process's environment (which another process of the same
// user could read in /proc) nor on a command line or in a file.
const tokenFD = 3

// tokenHelper answers git's "get" with the token read from tokenFD. It is
// configured through GIT_CONFIG_* variables, so the token is not in the
// helper's text, on any command line, in a config file or in a URL; git
// tries it after the host's own helpers, so the host's credentials win.
var tokenHelper = fmt.Sprintf(`!f() { test "$1" = get || exit 0; IFS= read -r t <&%d || test -n "$t" || exit 0; echo "username=$%s"; echo "password=$t"; }; f`, tokenFD, userVar)

// userVar carries the user name the forge expects with a token (not a
// secret): x-access-token (GitHub, Gitea), oauth2 (GitLab).
const userVar = "H9_INTERNAL_GIT_USER"

// credential is what a git child talking to a remote needs for the token
// to reach it: the helper's configuration and the token for its pipe.
type credential struct {
	env   []string
	token string
}

// credentialFor is nothing unless the repository is on a forge (user is
// the user name its tokens go with), the URL is https (or http to this
// machine, for tests) and there is a token. The helper is scoped to the
// URL's scheme and host, so no other host is offered it.
func credentialFor(rawURL, token, user string) credential {
	if token == "" || user == "" {
		return credential{}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())) {
		return credential{}
	}
	scope := u.Scheme + "://" + u.Host
	return credential{token: token, env: []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=credential." + scope + ".helper",
		"GIT_CONFIG_VALUE_0=" + tokenHelper,
		userVar + "=" + user,
	}}
}

// pipe is the read end of a pipe holding the token, for the child's
// tokenFD; nil when there is no token.
func (c credential) pipe() (*os.File, error) {
	if c.token == "" {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(w, c.token+"\n") // far below a pipe's buffer
	if err = errors.Join(err, w.Close()); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactErr is err with the token and any credential in repo's URL taken
// out of its words, as git may quote a URL back.
func redactErr(err error, repo Repo, token string) error {
	msg := err.Error()
	if red := Redact(repo.URL); red != repo.URL {
		msg = strings.ReplaceAll(msg, repo.URL, red)
	}
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "[REDACTED]")
	}
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }

func (e *redacted) Unwrap() error { return e.err }

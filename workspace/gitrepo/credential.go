package gitrepo

import (
	"net"
	"net/url"
	"strings"
)

// tokenVar carries H9_GITHUB_TOKEN to the credential helper, in the
// environment of h9's git child only.
const tokenVar = "H9_INTERNAL_GIT_TOKEN"

// userVar carries the user name the forge expects with a token (not a
// secret): x-access-token (GitHub, Gitea), oauth2 (GitLab).
const userVar = "H9_INTERNAL_GIT_USER"

// tokenHelper answers git's "get" with the token from tokenVar. It is
// configured through GIT_CONFIG_* variables, so the token is not in the
// helper's text, on any command line, in a config file or in a URL; git
// tries it after the host's own helpers, so the host's credentials win.
const tokenHelper = `!f() { test "$1" = get || exit 0; echo "username=$` + userVar + `"; echo "password=$` + tokenVar + `"; }; f`

// credentialEnv is what a git child needs for the token to reach rawURL's
// host: nothing unless the repository is on a forge (user is its token's user name), the URL is https (or
// http to this machine, for tests) and there is a token. The helper is
// scoped to the URL's scheme and host, so no other host is offered it.
func credentialEnv(rawURL, token, user string) []string {
	if token == "" || user == "" {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil
	}
	scope := u.Scheme + "://" + u.Host
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=credential." + scope + ".helper",
		"GIT_CONFIG_VALUE_0=" + tokenHelper,
		tokenVar + "=" + token,
		userVar + "=" + user,
	}
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

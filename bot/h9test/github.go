package h9test

import (
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegithub"
)

// GitHub starts a fake GitHub accepting token that serves the bare
// repository remote as repo (owner/name, pushable), closed when the test
// ends.
func GitHub(tb testing.TB, token, repo, remote string) *fakegithub.Server {
	gh := fakegithub.New(token)
	tb.Cleanup(gh.Close)
	gh.AddRepo(repo, remote, true)
	return gh
}

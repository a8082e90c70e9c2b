package gitrepo

import (
	"context"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// forgeTimeout bounds one forge operation (finding or opening a request
// takes up to four API calls, checking access two or three): a forge that
// stops answering fails it with a clear error instead of holding the
// session's push for ever.
const forgeTimeout = 2 * time.Minute

// PullRequest is an open pull (or merge) request of a session branch.
type PullRequest struct {
	URL    string
	Number int
	Reused bool       // it existed already (its body is brought up to date)
	Kind   forge.Kind // the forge it is on
}

// OpenPullRequest opens the request of the session branch onto its base
// on the repository's forge, or finds the one already open for that head:
// a second call answers the same request, never a duplicate. The branch
// must have been pushed.
func (r *Repos) OpenPullRequest(ctx context.Context, s Session, title, body string) (PullRequest, error) {
	repo, err := r.checkSession(s)
	if err != nil {
		return PullRequest{}, err
	}
	client, err := r.Forge(repo.Name)
	if err != nil {
		return PullRequest{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, forgeTimeout)
	defer cancel()
	req, err := client.OpenRequest(ctx, s.Branch, s.Base, title, body)
	if err != nil {
		return PullRequest{}, err
	}
	return PullRequest{URL: req.URL, Number: req.Number, Reused: req.Reused, Kind: client.Kind()}, nil
}

// CheckAccess tells whether the forge's token is accepted, the project
// exists and the token may push and open requests there (for h9 doctor):
// nil, or why not.
func (r *Repos) CheckAccess(ctx context.Context, name string) error {
	client, err := r.Forge(name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, forgeTimeout)
	defer cancel()
	return client.CheckAccess(ctx)
}

// RequestWord is what repo's forge calls a request ("pull request",
// "merge request"), for buttons and messages.
func (r *Repos) RequestWord(repo Repo) string {
	if repo.Forge == nil {
		return forge.GitHub.RequestWord()
	}
	return forge.Kind(repo.Forge.Type).RequestWord()
}

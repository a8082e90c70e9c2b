package gitrepo

import (
	"context"
	"fmt"

	"github.com/h9-app/h9/workspace"
)

// Setup runs the repository's setup command in the session's workspace:
// sandboxed like any command, writable, with the host's network and, of
// h9's secrets, only the repository's own `secrets:`, for at most
// workspace.MaxBashTimeout.
// ran is false when the repository has none. A non-zero exit is a result,
// not an error.
func (r *Repos) Setup(ctx context.Context, s Session) (res workspace.BashResult, ran bool, err error) {
	repo, err := r.checkSession(s)
	if err != nil || repo.Setup == "" {
		return workspace.BashResult{}, false, err
	}
	ws, err := r.cfg.Workspaces.Open(s.ID)
	if err != nil {
		return workspace.BashResult{}, false, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	defer ws.Close()
	opts := workspace.BashOptions{Network: true, Timeout: workspace.MaxBashTimeout, SetupEnv: r.setupSecrets(repo)}
	res, err = ws.Bash(ctx, repo.Setup, opts)
	return res, true, err
}

// setupSecrets are the repository's secrets with their values; the
// workspace scrubs them from the output (workspace.Config.Secrets).
func (r *Repos) setupSecrets(repo Repo) []workspace.Secret {
	var out []workspace.Secret
	for _, name := range repo.Secrets {
		out = append(out, workspace.Secret{Name: name, Value: r.cfg.Secrets[name]})
	}
	return out
}

// allSecrets are every repository's setup secrets, for scrubbing what h9
// shows of a checkout.
func (r *Repos) allSecrets() []workspace.Secret {
	var out []workspace.Secret
	for name, v := range r.cfg.Secrets {
		out = append(out, workspace.Secret{Name: name, Value: v})
	}
	return out
}

package gitrepo

import (
	"context"
	"fmt"

	"github.com/h9-app/h9/workspace"
)

// Setup runs the repository's setup command in the session's workspace:
// sandboxed like any command, writable, with the host's network and no
// secret of h9's in its environment, for at most workspace.MaxBashTimeout.
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
	res, err = ws.Bash(ctx, repo.Setup, workspace.BashOptions{Network: true, Timeout: workspace.MaxBashTimeout})
	return res, true, err
}

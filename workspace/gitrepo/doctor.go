package gitrepo

import (
	"context"
	"fmt"
	"strings"
)

// CheckRemote asks the repository's remote for its branches (git
// ls-remote, with the credentials a fetch would use) and returns how many
// it has: h9 doctor's reachability check.
func (r *Repos) CheckRemote(ctx context.Context, name string) (branches int, err error) {
	repo, err := r.repo(name)
	if err != nil {
		return 0, err
	}
	// Outside any repository: the cache directory, with discovery stopped there.
	env := []string{"GIT_CEILING_DIRECTORIES=" + r.cfg.Dir}
	out, err := gitRun{dir: r.cfg.Dir, env: env, remote: r.remote(repo), args: []string{"ls-remote", "--heads", "--", repo.URL}}.text(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s is not reachable: %w", Redact(repo.URL), redactErr(err, repo, r.token(repo)))
	}
	if out == "" {
		return 0, nil
	}
	return len(strings.Split(out, "\n")), nil
}

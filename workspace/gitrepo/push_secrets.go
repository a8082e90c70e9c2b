package gitrepo

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/h9-app/h9/workspace"
)

// checkNoSecrets refuses a push whose commits hold a setup secret's value
// (an .npmrc setup wrote, committed with the session's work): h9 never
// sends a secret, to the forge no more than to Slack (ARCHITECTURE.md,
// "Network for the agent": secrets reach setup only). Every commit since
// the base is read, so a value added and removed again is found too.
func (r *Repos) checkNoSecrets(ctx context.Context, own, ref string) error {
	secrets := r.allSecrets()
	if len(secrets) == 0 {
		return nil
	}
	sw := workspace.NewScrubWriter(io.Discard, secrets)
	_, err := gitRun{dir: own, out: sw, args: []string{"log", "-p", "--no-ext-diff", "--no-textconv", "--no-color", "--format=%H%n%B",
		baseRef + ".." + ref, "--"}}.run(ctx)
	sw.Flush()
	if err != nil {
		return fmt.Errorf("checking the branch for setup secrets: %w", err)
	}
	if found := sw.Found(); len(found) > 0 {
		return fmt.Errorf("%w: its commits hold the value of %s (a file setup wrote, such as .npmrc?); "+
			"h9 does not push it: remove the file from the session's commits or keep it out of git (.gitignore)",
			ErrSecretInBranch, strings.Join(found, ", "))
	}
	return nil
}

package forge

import (
	"fmt"
	"net/http"
)

// gitlabBuilt is whether the GitLab client below is complete.
const gitlabBuilt = false

func newGitLab(p Project, token string, hc *http.Client) (Client, error) {
	return nil, fmt.Errorf("%w: GitLab is not built yet", ErrAPI)
}

package forge

import (
	"fmt"
	"net/http"
)

func newGitLab(p Project, token string, hc *http.Client) (Client, error) {
	return nil, fmt.Errorf("%w: GitLab is not built yet", ErrAPI)
}

func newGitea(p Project, token string, hc *http.Client) (Client, error) {
	return nil, fmt.Errorf("%w: Gitea is not built yet", ErrAPI)
}

package forge

import (
	"fmt"
	"net/http"
)

// giteaBuilt is whether the Gitea client below is complete.
const giteaBuilt = false

func newGitea(p Project, token string, hc *http.Client) (Client, error) {
	return nil, fmt.Errorf("%w: Gitea is not built yet", ErrAPI)
}

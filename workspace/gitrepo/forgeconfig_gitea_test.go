package gitrepo

import (
	"strings"
	"testing"
)

// A Gitea api that is not the /api/v1/ base is refused at start, in one
// line naming the key.
func TestGiteaAPIMustBeV1(t *testing.T) {
	repos, err := ParseFile([]byte("repos:\n  - name: r\n    url: https://git.example.com/a/b.git\n    forge: {type: gitea, api: 'https://git.example.com/'}\n"))
	if err == nil {
		_, err = Check(repos)
	}
	if err == nil || !strings.Contains(err.Error(), "forge.api") || !strings.Contains(err.Error(), "/api/v1/") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a Gitea api without /api/v1/: %v", err)
	}
}

package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace"
)

// A repository's setup fills its cache and the repository's next session
// finds it there, in a HOME of its own; the cache lies with the
// repository's files under the data directory.
func TestSessionsOfARepositoryShareItsCache(t *testing.T) {
	for _, sb := range []string{"none", "bwrap"} {
		t.Run(sb, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"README.md": "hi\n"})
			f := newFixture(t, sb, Repo{Name: "backend", URL: remote,
				Setup: `mkdir -p "$GOMODCACHE" && echo downloaded > "$GOMODCACHE/module" && echo "$HOME" > home-of-setup`})
			first := f.prepare("backend")
			res, ran, err := f.repos.Setup(f.ctx, first)
			if err != nil || !ran || res.ExitCode != 0 {
				t.Fatalf("setup: %+v ran=%v err=%v", res, ran, err)
			}
			second := f.prepare("backend")
			ws, err := f.wsm.Open(second.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			r, err := ws.Bash(f.ctx, `cat "$GOMODCACHE/module"; echo "GOMODCACHE=$GOMODCACHE HOME=$HOME"`, workspace.BashOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Output, "downloaded") || !strings.Contains(r.Output, "GOMODCACHE="+f.data) {
				t.Errorf("the second session lacks the cache its repository's setup filled: %q", r.Output)
			}
			data, err := os.ReadFile(filepath.Join(f.dir(first), "home-of-setup"))
			if err != nil {
				t.Fatal(err)
			}
			setupHome := strings.TrimSpace(string(data))
			if strings.Contains(r.Output, "HOME="+setupHome+"\n") {
				t.Errorf("the sessions share a HOME (%s)", setupHome)
			}
		})
	}
}

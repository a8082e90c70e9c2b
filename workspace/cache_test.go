package workspace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// Sessions of one repository share its cache, writable and kept between
// them; a session of another repository does not see it; each keeps its
// own HOME; in plan mode the cache is read-only.
func TestRepositoryCacheIsSharedByItsSessionsOnly(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			data := t.TempDir()
			m := newManagerWith(t, Config{Sandbox: sb, Root: filepath.Join(data, "workspaces"), Hidden: []string{data}})
			cacheA, cacheB := filepath.Join(data, "repos", "a", "cache"), filepath.Join(data, "repos", "b", "cache")
			for id, c := range map[string]string{"C1-1.1": cacheA, "C1-2.2": cacheA, "C1-3.3": cacheB} {
				if err := m.UseCache(id, c); err != nil {
					t.Fatal(err)
				}
			}
			first, second, other := openWS(t, m, "C1-1.1"), openWS(t, m, "C1-2.2"), openWS(t, m, "C1-3.3")
			if sb == "landlock" { // it cannot grant writes there: no cache at all, the tools' defaults in HOME
				if r := mustBash(t, first, `echo "[$GOCACHE$GOMODCACHE$npm_config_cache$PIP_CACHE_DIR]"`, BashOptions{}); !strings.Contains(r.Output, "[]") {
					t.Errorf("the Landlock mode hands out cache variables: %q", r.Output)
				}
				return
			}
			r := mustBash(t, first, `mkdir -p "$GOCACHE" && echo warm > "$GOCACHE/entry" && echo "$GOMODCACHE $npm_config_cache $PIP_CACHE_DIR $HOME"`, BashOptions{})
			if r.ExitCode != 0 || !strings.Contains(r.Output, filepath.Join(cacheA, "go-mod")) || !strings.Contains(r.Output, filepath.Join(cacheA, "npm")) {
				t.Fatalf("first session: %+v", r)
			}
			home1 := strings.Fields(r.Output)[3]
			r = mustBash(t, second, `cat "$GOCACHE/entry"; echo "home=$HOME"`, BashOptions{})
			if !strings.Contains(r.Output, "warm") {
				t.Errorf("the second session of the repository does not see its cache: %q", r.Output)
			}
			if strings.Contains(r.Output, "home="+home1+"\n") {
				t.Errorf("two sessions share a HOME: %q", r.Output)
			}
			r = mustBash(t, other, `cat "$GOCACHE/entry" 2>&1; echo "GOCACHE=$GOCACHE"`, BashOptions{})
			if strings.Contains(r.Output, "warm") || !strings.Contains(r.Output, "GOCACHE="+filepath.Join(cacheB, "go-build")) {
				t.Errorf("another repository's session uses this one's cache: %q", r.Output)
			}
			if sb != "bwrap" {
				return // unsandboxed, the host's files are all readable: only bwrap hides cacheA below
			}
			r = mustBash(t, other, `cat `+cacheA+`/go-build/entry 2>&1`, BashOptions{})
			if strings.Contains(r.Output, "warm") {
				t.Errorf("another repository's session reads this one's cache by its path: %q", r.Output)
			}
			r = mustBash(t, second, `echo x > "$GOCACHE/plan" && echo wrote`, BashOptions{ReadOnly: true})
			if strings.Contains(r.Output, "wrote") {
				t.Errorf("plan mode wrote to the cache: %q", r.Output)
			}
		})
	}
}

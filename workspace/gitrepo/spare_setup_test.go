package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spare is made set up: the session that takes it starts with the
// setup's files and its cache filled, and does not run setup again —
// unless the base moved since, when setup must run on the new tree. The
// spare's setup ran in a HOME the session does not share.
func TestSparesAreMadeSetUp(t *testing.T) {
	for _, sb := range []string{"none", "bwrap"} {
		t.Run(sb, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"a.txt": "x\n"})
			setup := `echo ran >> setup.log && echo "$HOME" > setup-home && mkdir -p "$GOMODCACHE" && touch "$GOMODCACHE/m"`
			f := newFixture(t, sb, Repo{Name: "r", URL: remote, Setup: setup}, func(c *Config) { c.Spares = true })
			first, _ := f.prepareAndReport("r")
			if first.Spare || first.SetUp {
				t.Fatalf("the first session found a spare: %+v", first)
			}
			if err := f.repos.WaitSpares(); err != nil {
				t.Fatalf("making the spare: %v", err)
			}
			p, s := f.prepareAndReport("r")
			if !p.Spare || !p.SetUp {
				t.Fatalf("the second session's checkout: %+v, want a set-up spare", p)
			}
			dir := f.dir(s)
			if data, _ := os.ReadFile(filepath.Join(dir, "setup.log")); string(data) != "ran\n" {
				t.Errorf("setup.log = %q, want one run", data)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", spareSetupMark)); err == nil {
				t.Error("the spare's mark is left in the session's .git")
			}
			res := f.bash(f.open(s), `ls "$GOMODCACHE"; echo "HOME=$HOME"`, false)
			setupHome, _ := os.ReadFile(filepath.Join(dir, "setup-home"))
			if !strings.Contains(res.Output, "m\n") || strings.Contains(res.Output, "HOME="+strings.TrimSpace(string(setupHome))+"\n") {
				t.Errorf("the session's cache and home: %q (the spare's setup ran with HOME=%s)", res.Output, setupHome)
			}
			if err := f.repos.WaitSpares(); err != nil {
				t.Fatal(err)
			}
			pushToRemote(t, remote, "main", map[string]string{"a.txt": "moved\n"})
			if p, _ := f.prepareAndReport("r"); !p.Spare || p.SetUp {
				t.Errorf("after the base moved: %+v, want a spare that is not counted as set up", p)
			}
		})
	}
}

package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

func TestHelpTellsRepositories(t *testing.T) {
	t.Parallel()
	h := helpText
	for _, want := range []string{"[repo=backend branch=release-1.2]", "`/h9 repo &lt;name&gt;`", "`/h9 repo none`", "`/h9 repos`", "Push branch", "Open pull request"} {
		if !strings.Contains(h, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// The outcome of a done session with a repository: files with +/−, the
// buttons only when something changed, within Slack's limits however
// many files and however long their paths.
func TestRenderRepoDone(t *testing.T) {
	t.Parallel()
	line := RepoLine{Repo: "backend", Branch: "h9/fix-abc234", Base: "main"}
	none := RenderRepoDone("S1", "Nothing to do.", planning.Progress{Total: 1, Completed: 1}, Changes{RepoLine: line, CanOpenPR: true})
	if strings.Contains(blocksJSON(t, none), ActionPushBranch) || !strings.Contains(blocksJSON(t, none), "No changes") {
		t.Errorf("no changes: %s", blocksJSON(t, none))
	}
	var files []FileLine
	for i := 0; i < 500; i++ {
		files = append(files, FileLine{Path: strings.Repeat("deep/", 60) + "f.go", Added: i, Deleted: 1})
	}
	files = append(files, FileLine{Path: "logo.png", Binary: true})
	many := RenderRepoDone("S1", strings.Repeat("words ", 2000), planning.Progress{Total: 1, Completed: 1},
		Changes{RepoLine: line, Files: files, Added: 9, Deleted: 3})
	if err := CheckLimits(many); err != nil {
		t.Fatal(err)
	}
	js := blocksJSON(t, many)
	for _, want := range []string{"501 files changed* +9 −3", "and 486 more", ActionPushBranch, LabelPushBranch} {
		if !strings.Contains(js, want) {
			t.Errorf("outcome lacks %q", want)
		}
	}
	if strings.Contains(js, ActionOpenPR) {
		t.Error("Open pull request without a GitHub name or token")
	}
}

func blocksJSON(t *testing.T, m Message) string {
	t.Helper()
	data, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A client that reads only text sees what the blocks say: the files with
// their +/− (one file is "1 file changed"), the last lines of a setup
// failure, and a checklist's repository and branch.
func TestRepoFactsInTheText(t *testing.T) {
	t.Parallel()
	line := RepoLine{Repo: "backend", Branch: "h9/fix-abc234"}
	one := RenderRepoDone("S1", "Done it.", planning.Progress{Total: 1, Completed: 1},
		Changes{RepoLine: line, Files: []FileLine{{Path: "hello.txt", Added: 1}}, Added: 1})
	for _, want := range []string{"1 file changed +1 −0 on h9/fix-abc234", "hello.txt +1 −0"} {
		if !strings.Contains(one.Text, want) || !strings.Contains(allText(one), strings.TrimSuffix(want, " on h9/fix-abc234")) {
			t.Errorf("outcome text %q or blocks lack %q", one.Text, want)
		}
	}
	out := "step 1\n\nnpm ERR! missing script: build\nnpm ERR! exit 1\n"
	failed := RenderSetupFailed("S1", "setup exited with code 1", out)
	if !strings.Contains(failed.Text, "npm ERR! missing script: build\nnpm ERR! exit 1") {
		t.Errorf("setup failure text lacks the output's last lines: %q", failed.Text)
	}
	cl := RenderChecklist(Checklist{SessionID: "S1", Task: "t", Repo: &line})
	if !strings.Contains(cl.Text, "repository backend, branch h9/fix-abc234") {
		t.Errorf("checklist text lacks the repository: %q", cl.Text)
	}
}

// The request button is named as the forge names requests: a merge
// request on GitLab, a pull request elsewhere; the action is the same.
func TestRequestButtonFollowsTheForge(t *testing.T) {
	t.Parallel()
	line := RepoLine{Repo: "backend", Branch: "h9/fix-abc234", Base: "main"}
	files := []FileLine{{Path: "a.go", Added: 1}}
	for _, c := range []struct {
		mr        bool
		want, not string
	}{{false, LabelOpenPR, LabelOpenMR}, {true, LabelOpenMR, LabelOpenPR}} {
		js := blocksJSON(t, RenderRepoDone("S1", "Done.", planning.Progress{Total: 1, Completed: 1},
			Changes{RepoLine: line, Files: files, Added: 1, CanOpenPR: true, MergeRequest: c.mr}))
		if !strings.Contains(js, c.want) || strings.Contains(js, c.not) || !strings.Contains(js, ActionOpenPR) {
			t.Errorf("merge request %v: %s", c.mr, js)
		}
	}
}

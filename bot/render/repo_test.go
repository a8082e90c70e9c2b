package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

func TestHelpTellsRepositories(t *testing.T) {
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

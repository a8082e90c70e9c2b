package gitrepo

import (
	"strings"
	"testing"
)

// Files shared in the thread (.h9/attachments/) never enter a checkpoint,
// even when the model staged them itself, and the model's git status does
// not list them; the session's own changes are committed as always.
func TestCheckpointLeavesAttachmentsOut(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "one\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "mkdir -p .h9/attachments && echo png > .h9/attachments/1.2-shot.png && echo log > .h9/attachments/1.2-app.log && "+
		"git add -f .h9/attachments/1.2-app.log && echo two >> a.txt", false)
	c, err := f.repos.Checkpoint(f.ctx, ws, s, "change a", nil)
	if err != nil || c == nil {
		t.Fatalf("checkpoint: %+v, %v", c, err)
	}
	if c.Files != 1 {
		t.Errorf("checkpoint changed %d files, want 1 (a.txt only)", c.Files)
	}
	files := git(t, f.own(s), "ls-tree", "-r", "--name-only", c.ID)
	if strings.Contains(files, "attachments") || !strings.Contains(files, "a.txt") {
		t.Errorf("checkpoint tree:\n%s\nwant a.txt and no attachments", files)
	}
	if st := f.bash(ws, "git status --porcelain --untracked-files=all", true); strings.Contains(st.Output, "attachments") {
		t.Errorf("git status lists the attachments:\n%s", st.Output)
	}
	if res := f.bash(ws, "cat .h9/attachments/1.2-shot.png", true); !strings.Contains(res.Output, "png") {
		t.Errorf("the attachment is gone from the workspace: %q", res.Output)
	}
}

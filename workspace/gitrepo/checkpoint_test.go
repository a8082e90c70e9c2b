package gitrepo

import (
	"strings"
	"testing"
)

// A checkpoint commits the workspace's changes on the session branch with
// the todo as subject, the session trailer, h9 as author and the owner as
// co-author; its id and +/− are the session repository's; nothing changed
// is no checkpoint; the model's own commits and a reset are followed.
func TestCheckpoints(t *testing.T) {
	for _, sandbox := range []string{"bwrap", "landlock", "none"} {
		t.Run(sandbox, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
			f := newFixture(t, sandbox, Repo{Name: "r", URL: remote}, func(c *Config) { c.Author = Identity{"h9 bot", "bot@h9.test"} })
			s := f.prepare("r")
			ws := f.open(s)
			owner := &Identity{"Ada Lovelace", "ada@example.com"}

			if c, err := f.repos.Checkpoint(f.ctx, ws, s, "nothing yet", owner); err != nil || c != nil {
				t.Fatalf("checkpoint of an unchanged workspace = %+v, %v; want none", c, err)
			}
			f.bash(ws, "printf 'one\\n2\\nthree\\nfour\\n' > a.txt && echo new > b.txt", false)
			c, err := f.repos.Checkpoint(f.ctx, ws, s, "Fix the\nnumbers  ", owner)
			if err != nil || c == nil {
				t.Fatalf("checkpoint: %+v, %v", c, err)
			}
			if c.Added != 3 || c.Deleted != 1 || c.Files != 2 || !strings.HasPrefix(c.ID, c.Short) || len(c.Short) < 7 {
				t.Errorf("checkpoint = %+v, want 2 files +3 −1", c)
			}
			own := f.own(s)
			if got := git(t, own, "rev-parse", "refs/heads/"+s.Branch); got != c.ID {
				t.Errorf("session repository's branch at %s, want %s", got, c.ID)
			}
			msg := git(t, own, "log", "-1", "--format=%an <%ae>|%cn|%B", c.ID)
			want := "h9 bot <bot@h9.test>|h9 bot|Fix the numbers\n\nH9-Session: " + s.ID + "\nCo-authored-by: Ada Lovelace <ada@example.com>"
			if msg != want {
				t.Errorf("commit:\n%s\nwant:\n%s", msg, want)
			}
			if got := git(t, f.dir(s), "rev-parse", "HEAD"); got != c.ID {
				t.Errorf("the workspace's HEAD is %s, want the checkpoint %s", got, c.ID)
			}
			if res := f.bash(ws, "test -e .git/h9-checkpoint.bundle && echo left", true); strings.Contains(res.Output, "left") {
				t.Error("the checkpoint's bundle was left in the workspace")
			}

			// The model's own commit, then a checkpoint with no pending change.
			f.bash(ws, "echo more >> b.txt && git add b.txt && git commit -qm 'model commit'", false)
			c2, err := f.repos.Checkpoint(f.ctx, ws, s, "second", nil)
			if err != nil || c2 == nil || c2.Added != 1 || c2.Deleted != 0 {
				t.Fatalf("checkpoint after the model's commit = %+v, %v; want +1 −0", c2, err)
			}
			if got := git(t, own, "log", "-1", "--format=%s", "refs/heads/"+s.Branch); got != "model commit" {
				t.Errorf("branch tip subject %q, want the model's commit", got)
			}
			// Back in history: the branch follows, nothing to fetch.
			f.bash(ws, "git reset -q --hard HEAD~1", false)
			c3, err := f.repos.Checkpoint(f.ctx, ws, s, "third", nil)
			if err != nil || c3 == nil || c3.ID != c.ID {
				t.Fatalf("checkpoint after a reset = %+v, %v; want the branch back at %s", c3, err, c.ID)
			}
		})
	}
}

// A failing commit (the model broke its repository) is an error that
// says what git said, not a crash, and no checkpoint.
func TestCheckpointOfABrokenRepository(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo change > a.txt && echo garbage > .git/HEAD", false)
	c, err := f.repos.Checkpoint(f.ctx, ws, s, "todo", nil)
	if err == nil || c != nil {
		t.Fatalf("checkpoint of a broken repository = %+v, %v; want an error", c, err)
	}
	if !strings.Contains(err.Error(), "checkpoint commit failed") {
		t.Errorf("error %q does not say the commit failed", err)
	}
}

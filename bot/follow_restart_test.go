package bot

import (
	"github.com/h9-app/h9/bot/follow"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// h9 stopped after its replies reached the forge and before the save that
// records them (kill -9 between the two): the next start finds them by
// their markers and sends none again, then says so in the thread once.
func TestFollowRepliesOnceAcrossARestart(t *testing.T) {
	e := newFollowEnv(t, gitrepo.FollowAsk)
	thread, _, _ := e.openFollowed()
	e.github.SetPermission("alice", "write")
	e.github.AddInline("acme/backend", 1, "alice", "hello.txt", 1, "@@ -0,0 +1 @@\n+hello", "Say hi.", 0)
	e.github.AddInline("acme/backend", 1, "alice", "hello.txt", 1, "@@ -0,0 +1 @@\n+hello", "And wave.", 0)
	batch := e.waitBatch(thread, "PR #1: 2 review comments from @alice")
	e.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`), fakemodel.Text("Said hi."))
	e.click(testUser, batch.TS, render.ActionAddressFeedback)
	answered := e.waitMessage(thread, "Answered on PR #1", 1)
	sent := e.github.Written("acme/backend", 1)
	if len(sent) != 3 {
		t.Fatalf("h9 wrote %+v, want 2 replies and a summary", sent)
	}

	e.stop()
	e.deleteMessage(answered.TS) // it is posted after the save that never happened
	e.restartPending(thread, func(s *Session) {
		b := s.Follow.Batch
		if b == nil || b.Status != follow.Done || len(b.Replies) != 3 {
			t.Fatalf("the batch as saved: %+v", b)
		}
		b.Status, b.Tries = follow.Replying, 1
		for i := range b.Replies {
			b.Replies[i].Sent = false
		}
	})
	e.waitMessage(thread, "Answered on PR #1", 1)
	if again := e.github.Written("acme/backend", 1); len(again) != 3 {
		t.Errorf("after the restart h9 has written %d comments, want the same 3: %+v", len(again), again)
	}
	if rec := e.record(thread); rec.Follow.Batch.Status != follow.Done || !rec.Follow.Following() {
		t.Errorf("after the restart the batch is %q, following %t", rec.Follow.Batch.Status, rec.Follow.Following())
	}
	if n := len(e.botMessages(thread, "PR #1: 2 review comments")); n != 1 {
		t.Errorf("%d batch messages, want the one", n)
	}
	if strings.Contains(e.logs.String(), "answering on the request failed") {
		t.Error("answering failed after the restart")
	}
}

// A restart while following: the next start goes on polling from the
// stored cursor: a comment made while h9 was down makes one batch, and
// what was read before it is not shown again.
func TestFollowGoesOnAfterARestart(t *testing.T) {
	e := newFollowEnv(t, gitrepo.FollowAsk)
	thread, _, _ := e.openFollowed()
	e.github.SetPermission("alice", "write")
	e.github.AddComment("acme/backend", 1, "alice", "First thought.")
	e.waitBatch(thread, "PR #1: 1 review comment from @alice", "First thought.")
	e.stop()
	e.github.AddComment("acme/backend", 1, "alice", "Second thought.")
	e.start()
	second := e.waitBatch(thread, "Second thought.")
	if !strings.Contains(blocksText(second), "First thought.") {
		t.Errorf("the waiting batch did not take in the new comment: %s", blocksText(second))
	}
	if n := len(e.botMessages(thread, "h9_feedback_actions")); n != 1 {
		t.Errorf("%d batch messages with buttons, want 1 (the first superseded)", n)
	}
}

package bot

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// h9 stopped after deciding two posts: one reached Slack before the stop
// (its ts never saved), the other did not. The restarted bot adopts the
// first from the thread and posts the second, each exactly once, and then
// the session is at rest (no longer active).
func TestRestartSettlesPendingPosts(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Finished a."))
	thread := e.startSession("run", "pending posts")
	done := e.waitMessage(thread, "Finished a.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")
	e.stop()

	rec := e.record(thread)
	if len(rec.Posts) != 0 || rec.active() {
		t.Fatalf("a session at rest keeps pending posts %+v", rec.Posts)
	}
	key := render.PostKey(firstBlockID(t, done))
	if key == "" {
		t.Fatalf("the Done message's first block %q carries no key", firstBlockID(t, done))
	}
	rec.Posts = []PendingPost{
		{Key: key, Kind: postNotice, Text: done.Text, Blocks: done.Blocks},      // posted, ts lost
		{Key: "notice-99", Kind: postNotice, Text: "Only decided, never sent."}, // saved, never posted
	}
	e.putRecord(rec)
	e.start()
	e.waitMessage(thread, "Only decided, never sent.", 1)
	e.waitFor("the posts settled", func() bool { return len(e.record(thread).Posts) == 0 })
	if n := len(e.botMessages(thread, "Finished a.")); n != 1 {
		t.Errorf("%d Done messages after the restart, want the one adopted", n)
	}
	if n := len(e.botMessages(thread, "Only decided, never sent.")); n != 1 {
		t.Errorf("the pending post was posted %d times, want once", n)
	}
	if e.record(thread).active() {
		t.Error("the session stays active once its posts are settled")
	}
}

// firstBlockID is the block id of a message's first block.
func firstBlockID(t *testing.T, m fakeslack.Message) string {
	t.Helper()
	var bs slack.Blocks
	if err := json.Unmarshal(m.Blocks, &bs); err != nil || len(bs.BlockSet) == 0 {
		t.Fatalf("message %s has no blocks (%v)", m.TS, err)
	}
	return bs.BlockSet[0].ID()
}

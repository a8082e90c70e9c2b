package follow

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge"
)

// The replies: one to each inline comment, naming the commit when the
// branch moved (or the run's first words when it did not), then the
// summary; each ends with its marker, which MarkSent finds again.
func TestReplies(t *testing.T) {
	t.Parallel()
	b := &Batch{Seq: 2, Answer: "\n  Renamed it to Greet.\nAnd more.", Feedback: []forge.Feedback{
		{Kind: forge.Inline, Author: "alice", Path: "a.go", Line: 3, Body: "rename"},
		{Kind: forge.Conversation, Author: "bob", Body: "and the docs"},
		{Kind: forge.Inline, Author: "bob", Path: "b.go", Line: 9, Body: "typo"},
	}}
	rs := replies(b, "abc1234", true)
	if len(rs) != 3 || rs[0].Key != "b2-0" || rs[1].Key != "b2-2" || rs[2].Key != "b2-summary" || rs[2].To != nil || rs[0].To.Path != "a.go" {
		t.Fatalf("replies %+v", rs)
	}
	if !strings.HasPrefix(rs[0].Body, "Addressed in abc1234\n\n") || !strings.HasSuffix(rs[0].Body, Marker("b2-0")) {
		t.Errorf("an inline reply: %q", rs[0].Body)
	}
	if unchanged := replies(b, "abc1234", false); !strings.HasPrefix(unchanged[0].Body, "Renamed it to Greet.\n\n") {
		t.Errorf("an inline reply when nothing changed: %q", unchanged[0].Body)
	}
	b.Replies = rs
	b.MarkSent("Addressed in abc1234\n\n" + Marker("b2-2"))
	if b.Replies[0].Sent || !b.Replies[1].Sent || b.Replies[2].Sent {
		t.Errorf("marked sent: %+v", b.Replies)
	}
}

// The summary says only what there was: "1 comment", "2 failing
// checks", or both, never "0 failing checks".
func TestSummarySaysOnlyWhatThereWas(t *testing.T) {
	t.Parallel()
	comment := forge.Feedback{Kind: forge.Conversation, Body: "x"}
	check := forge.Check{Name: "build", State: "failure"}
	for _, c := range []struct {
		b       Batch
		changed bool
		want    string
	}{
		{Batch{Feedback: []forge.Feedback{comment}}, true, "h9 addressed 1 comment in abc1234."},
		{Batch{Failed: []forge.Check{check, check}}, true, "h9 addressed 2 failing checks in abc1234."},
		{Batch{Feedback: []forge.Feedback{comment, comment}, Failed: []forge.Check{check}}, true, "h9 addressed 2 comments and 1 failing check in abc1234."},
		{Batch{Feedback: []forge.Feedback{comment}, Answer: "Nothing to change."}, false, "h9 looked at 1 comment and changed nothing.\n\nNothing to change."},
	} {
		if got := Summary(&c.b, "abc1234", c.changed); got != c.want {
			t.Errorf("summary %q, want %q", got, c.want)
		}
	}
}

package render

import (
	"strings"
	"testing"
)

// A batch whose Address feedback was pressed during a run names who
// pressed, in place of the busy line, and keeps both buttons so Ignore
// can still change their mind; a user ID that is not one is never
// rendered as a mention.
func TestFeedbackBatchQueued(t *testing.T) {
	b := FeedbackBatch{SessionID: "s1", Seq: 3, Request: "PR #12", Busy: true, AutoNext: true,
		Comments: []FeedbackLine{{Kind: "comment", Author: "alice", Body: "Rename it."}}, QueuedBy: "U1"}
	m := RenderFeedbackBatch(b)
	mustFit(t, m)
	all := allText(m)
	if !strings.Contains(all, "<@U1> asked h9 to address this once the run ends.") || strings.Contains(all, "A run is going on") {
		t.Errorf("the queued batch reads: %s", all)
	}
	var ids []string
	for _, btn := range allButtons(m) {
		ids = append(ids, btn.ActionID)
	}
	if strings.Join(ids, ",") != ActionAddressFeedback+","+ActionIgnoreFeedback {
		t.Errorf("buttons %v, want Address feedback and Ignore", ids)
	}

	b.QueuedBy = "<!channel>"
	if all := allText(RenderFeedbackBatch(b)); strings.Contains(all, "<!channel>") || !strings.Contains(all, "someone asked h9") {
		t.Errorf("a forged user ID is rendered: %s", all)
	}
}

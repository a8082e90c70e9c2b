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

// A failing check links to its page when the forge gives an http(s) URL
// a link can carry; any other target is shown as plain text.
func TestFeedbackBatchLinksChecks(t *testing.T) {
	b := FeedbackBatch{SessionID: "s1", Seq: 1, Request: "PR #12", Checks: []CheckLine{
		{Name: "ci/build", State: "failure", URL: "https://ci.example.com/builds/7?a=1&b=2", Log: "exit 1"},
		{Name: "lint", State: "error", URL: "javascript:alert(1)"},
		{Name: "deploy", State: "failure", URL: "https://ci.example.com/x|<!channel>"},
	}}
	m := RenderFeedbackBatch(b)
	mustFit(t, m)
	all := allText(m)
	if !strings.Contains(all, "*<https://ci.example.com/builds/7?a=1&amp;b=2|ci/build>* failure") {
		t.Errorf("the build check is not linked to its page: %s", all)
	}
	if strings.Contains(all, "javascript:") || strings.Contains(all, "<!channel>") || !strings.Contains(all, "*lint* error") || !strings.Contains(all, "*deploy* failure") {
		t.Errorf("a target a link cannot carry made it into the message: %s", all)
	}
}

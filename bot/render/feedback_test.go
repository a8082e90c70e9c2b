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

// The message shows each comment's body, not only the headline: in the
// blocks quoted with its paragraphs, and in the fallback text that
// notifications and text-only clients show.
func TestFeedbackBatchShowsTheCommentBody(t *testing.T) {
	t.Parallel()
	b := FeedbackBatch{SessionID: "s1", Seq: 1, Request: "PR #1", Comments: []FeedbackLine{
		{Kind: "inline", Author: "bob", Path: "README.md", Line: 3, Body: "Add an exclamation of joy.\n\nA greeting without one is flat."}}}
	m := RenderFeedbackBatch(b)
	mustFit(t, m)
	if all := allText(m); !strings.Contains(all, "&gt; Add an exclamation of joy.\n&gt; \n&gt; A greeting without one is flat.") {
		t.Errorf("the blocks do not quote the comment's body: %s", all)
	}
	if !strings.Contains(m.Text, "@bob on README.md:3: Add an exclamation of joy. A greeting without one is flat.") {
		t.Errorf("the text shows only %q", m.Text)
	}
}

// Once Address feedback is pressed, the message says who pressed it, in
// its text as in its blocks.
func TestFeedbackBatchDecidedNamesWhoPressed(t *testing.T) {
	t.Parallel()
	b := FeedbackBatch{SessionID: "s1", Seq: 1, Request: "PR #1", Comments: []FeedbackLine{{Kind: "comment", Author: "bob", Body: "Add joy."}},
		Decided: "asked h9 to address this; the run has started.", DecidedBy: "U1"}
	m := RenderFeedbackBatch(b)
	mustFit(t, m)
	want := "<@U1> asked h9 to address this; the run has started."
	if !strings.Contains(m.Text, want) || !strings.Contains(allText(m), want) {
		t.Errorf("the decided message does not say who pressed: text %q, blocks %s", m.Text, allText(m))
	}
	for _, btn := range allButtons(m) {
		t.Errorf("a decided batch still offers %s", btn.ActionID)
	}
}

package render

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// summarySections caps a plan summary at 4 sections (12,000 units).
const summarySections = 4

// RenderReviewAsk is the Planning module's four-option dialog: exactly four buttons,
// each carrying the session and plan revision. The plan's summary is its
// own message (RenderPlanSummary), so it stays in the thread when the
// decision replaces this one.
func RenderReviewAsk(sessionID string, revision int) Message {
	v := ButtonValue{SessionID: sessionID, Revision: revision}
	return Message{
		Text: Escape("Plan ready for review: " + LabelApproveAuto + ", " + LabelApproveConfirm +
			", " + LabelKeepPlanning + " or " + LabelCancel + "?"),
		Blocks: blocks(
			section("h9_review_ask", "*Plan ready for review* (revision "+strconv.Itoa(revision)+
				"). Choose what happens next, or reply in this thread to revise the plan."),
			actions(BlockReviewActions,
				button(ActionApproveAuto, LabelApproveAuto, v, slack.StylePrimary),
				button(ActionApproveConfirm, LabelApproveConfirm, v, ""),
				button(ActionKeepPlanning, LabelKeepPlanning, v, ""),
				button(ActionCancel, LabelCancel, v, slack.StyleDanger),
			)),
	}
}

// RenderPlanSummary is the plan summary (capped), posted before the review.
func RenderPlanSummary(summary string) Message {
	return Message{Text: "Plan: " + safeLine(withoutPlanLabel(summary), 300), Blocks: summaryBlocks("h9_plan_summary", summary)}
}

func summaryBlocks(prefix, summary string) []slack.Block {
	bs := textSections(prefix, markdownCut(summary, summarySections*MaxSectionText), summarySections)
	if len(bs) == 0 {
		bs = blocks(section(prefix+"_0", "_No summary from the agent; the plan is on the checklist._"))
	}
	return bs
}

// RenderReviewDecided replaces the review message once someone chose: who
// chose what, and no buttons left to click.
func RenderReviewDecided(userID, choiceLabel string) Message {
	s := mention(userID) + " chose *" + safeLine(choiceLabel, 100) + "*."
	return Message{Text: s, Blocks: blocks(section("h9_review_decided", ":ballot_box_with_check: "+s))}
}

// RenderAgentText is the agent's answer to a follow-up, converted from
// markdown like the plan summary.
func RenderAgentText(s string) Message {
	return Message{Text: safeLine(s, 300), Blocks: summaryBlocks("h9_reply", s)}
}

// withoutPlanLabel drops the model's own "Plan:" at the start of its
// answer, which the fallback text already begins with.
func withoutPlanLabel(summary string) string {
	t := strings.TrimSpace(summary)
	if len(t) >= 5 && strings.EqualFold(t[:5], "plan:") {
		return strings.TrimSpace(t[5:])
	}
	return summary
}

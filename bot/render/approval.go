package render

import "github.com/slack-go/slack"

// Approval layout caps: the command or path, and the diff preview.
const (
	maxApprovalTool    = 80
	maxApprovalSummary = 1500
	maxApprovalPreview = MaxSectionText
)

// RenderApproval asks to confirm one mutating step (confirm-each-step mode):
// the tool, the command or path, a capped preview, Approve and Reject.
func RenderApproval(sessionID, stepID, tool, summary, preview string) Message {
	v := ButtonValue{SessionID: sessionID, StepID: stepID}
	bs := blocks(section("h9_approval_ask", "*Approve this step?* The agent wants to use "+inlineCode(tool, maxApprovalTool)+":"))
	// A bash step's preview is its whole command, of which the summary is
	// the start: show the command once.
	if tool != "bash" || OneLine(preview) == "" {
		bs = append(bs, section("h9_approval_summary", codeBlock(summary, maxApprovalSummary)))
	}
	if OneLine(preview) != "" {
		bs = append(bs, section("h9_approval_preview", codeBlock(preview, maxApprovalPreview)))
	}
	bs = append(bs, actions(BlockApprovalActions,
		button(ActionStepApprove, LabelStepApprove, v, slack.StylePrimary),
		button(ActionStepReject, LabelStepReject, v, slack.StyleDanger)))
	return Message{
		Text:   "Approval needed: " + safeLine(tool, maxApprovalTool) + " " + safeLine(summary, 300),
		Blocks: bs,
	}
}

// RenderApprovalDecided replaces the approval message after the click.
func RenderApprovalDecided(userID string, approved bool, tool, summary string) Message {
	icon, verb := IconCompleted, "approved"
	if !approved {
		icon, verb = IconCancelled, "rejected"
	}
	s := mention(userID) + " " + verb + " " + inlineCode(tool, maxApprovalTool) + " " + inlineCode(summary, 500)
	return Message{Text: s, Blocks: blocks(section("h9_approval_decided", icon+" "+s))}
}

// RenderApprovalStopped replaces a pending approval when Stop ended the run
// before anyone chose: the step did not run, and no buttons are left.
func RenderApprovalStopped(userID, tool, summary string) Message {
	s := "Stopped by " + mention(userID) + " before this step ran: " + inlineCode(tool, maxApprovalTool) + " " + inlineCode(summary, 500)
	return Message{Text: s, Blocks: blocks(section("h9_approval_stopped", IconCancelled+" "+s))}
}

package render

import (
	"strconv"

	"github.com/h9-app/h9/planning"
	"github.com/slack-go/slack"
)

// Caps for the free text in notices.
const (
	maxWhat          = 2500
	doneTextSections = 4
)

// RenderStalled is the Planning module's "execution stalled" line: auto-run stopped
// after runs runs in a row without a newly completed todo.
func RenderStalled(sessionID string, runs int) Message {
	n := strconv.Itoa(runs)
	s := ":warning: *Auto-run stalled:* " + n + " runs in a row finished without completing a task. " +
		"Reply in this thread with the next step and auto-run resumes with your guidance, or press Resume to try again as is."
	return Message{
		Text: "Auto-run stalled after " + n + " runs without progress. Reply in this thread with the next step.",
		Blocks: blocks(
			section("h9_stalled", s),
			actions(BlockResumeActions, button(ActionResume, LabelResume, ButtonValue{SessionID: sessionID}, slack.StylePrimary)),
		),
	}
}

// RenderDone announces the end of auto-run with the agent's final text.
func RenderDone(finalText string, p planning.Progress) Message {
	head := IconCompleted + " *Done* · " + p.String()
	if p.Active > 0 {
		head += " (" + strconv.Itoa(p.Active) + " still open)"
	}
	bs := blocks(section("h9_done", head))
	bs = append(bs, textSections("h9_done_text", markdownCut(finalText, doneTextSections*MaxSectionText), doneTextSections)...)
	return Message{Text: "Done: " + p.String() + ". " + safeLine(finalText, 300), Blocks: bs}
}

// RenderError reports a failure in words, with a Retry button.
func RenderError(sessionID, what string) Message {
	w := whatText(what, "an unknown error")
	return Message{
		Text: "Something went wrong: " + lineOr(what, "an unknown error"),
		Blocks: blocks(
			section("h9_error", ":x: *Something went wrong:* "+w+"\nPress Retry to try again, or reply in this thread."),
			actions(BlockRetryActions, button(ActionRetry, LabelRetry, ButtonValue{SessionID: sessionID}, slack.StylePrimary)),
		),
	}
}

// RenderInterrupted tells a thread, after a restart, that its work stopped,
// and offers Resume.
func RenderInterrupted(sessionID, what string) Message {
	w := whatText(what, "h9 restarted")
	return Message{
		Text: "Interrupted: " + lineOr(what, "h9 restarted") + ". Press Resume to continue.",
		Blocks: blocks(
			section("h9_interrupted", ":double_vertical_bar: *Interrupted:* "+w+"\nPress Resume to continue from where it stopped."),
			actions(BlockResumeActions, button(ActionResume, LabelResume, ButtonValue{SessionID: sessionID}, slack.StylePrimary)),
		),
	}
}

func whatText(what, fallback string) string {
	if w := safeText(what, maxWhat); w != "" {
		return w
	}
	return fallback
}

func lineOr(what, fallback string) string {
	if w := safeLine(what, 300); w != "" {
		return w
	}
	return fallback
}

// RenderBudget stops a session at its token budget: how much it used, the
// budget, and a Raise budget button that allows step more tokens and goes
// on where it stopped (the owner's or an admin's to press).
func RenderBudget(sessionID string, used Spend, budget, step int) Message {
	usedText := used.String()
	if usedText == "" {
		usedText = "0 tokens"
	}
	s := ":money_with_wings: *Token budget reached:* this session has used " + usedText +
		", more than its budget of " + TokenCount(budget) + " tokens, so h9 stopped before asking the model again. " +
		"Press *Raise budget* to allow " + TokenCount(step) + " more tokens and go on where it stopped."
	return Message{
		Text: "Token budget reached: this session has used " + usedText + ", more than its budget of " +
			TokenCount(budget) + " tokens. Press Raise budget to go on.",
		Blocks: blocks(
			section("h9_budget", s),
			actions(BlockBudgetActions, button(ActionRaiseBudget, LabelRaiseBudget, ButtonValue{SessionID: sessionID}, slack.StylePrimary)),
		),
	}
}

// RenderBudgetRaised replaces a budget message's button once user raised
// the budget.
func RenderBudgetRaised(user string, budget int) Message {
	s := "Budget raised by " + mention(user) + " to " + TokenCount(budget) + " tokens."
	if budget <= 0 {
		s = "Budget lifted by " + mention(user) + ": no budget is set any more."
	}
	return Message{Text: s, Blocks: blocks(section("h9_budget_raised", ":money_with_wings: "+s))}
}

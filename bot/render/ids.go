package render

// Action ids of every button h9 renders. The bot routes block_actions on these.
const (
	ActionApproveAuto     = "h9_approve_auto"
	ActionApproveConfirm  = "h9_approve_confirm"
	ActionKeepPlanning    = "h9_keep_planning"
	ActionCancel          = "h9_cancel"
	ActionStop            = "h9_stop"
	ActionStepApprove     = "h9_step_approve"
	ActionStepReject      = "h9_step_reject"
	ActionResume          = "h9_resume"
	ActionRetry           = "h9_retry"
	ActionRaiseBudget     = "h9_raise_budget"
	ActionPushBranch      = "h9_push_branch"
	ActionOpenPR          = "h9_open_pr"
	ActionAddressFeedback = "h9_address_feedback"
	ActionIgnoreFeedback  = "h9_ignore_feedback"
)

// Button labels. The four review labels are fixed by ARCHITECTURE.md.
const (
	LabelApproveAuto     = "Approve & auto-run"
	LabelApproveConfirm  = "Approve & confirm each step"
	LabelKeepPlanning    = "Keep planning"
	LabelCancel          = "Cancel"
	LabelStop            = "Stop"
	LabelStepApprove     = "Approve"
	LabelStepReject      = "Reject"
	LabelResume          = "Resume"
	LabelRetry           = "Retry"
	LabelRaiseBudget     = "Raise budget"
	LabelPushBranch      = "Push branch"
	LabelOpenPR          = "Open pull request"
	LabelOpenMR          = "Open merge request" // the same action on GitLab
	LabelAddressFeedback = "Address feedback"   // ARCHITECTURE.md, "Following a request"
	LabelIgnoreFeedback  = "Ignore"
)

// ChoiceLabel returns the label of the button with the given action id, or ""
// for an unknown id; the bot uses it to record a review decision.
func ChoiceLabel(actionID string) string {
	switch actionID {
	case ActionApproveAuto:
		return LabelApproveAuto
	case ActionApproveConfirm:
		return LabelApproveConfirm
	case ActionKeepPlanning:
		return LabelKeepPlanning
	case ActionCancel:
		return LabelCancel
	case ActionStop:
		return LabelStop
	case ActionStepApprove:
		return LabelStepApprove
	case ActionStepReject:
		return LabelStepReject
	case ActionResume:
		return LabelResume
	case ActionRetry:
		return LabelRetry
	case ActionRaiseBudget:
		return LabelRaiseBudget
	case ActionPushBranch:
		return LabelPushBranch
	case ActionOpenPR:
		return LabelOpenPR
	case ActionAddressFeedback:
		return LabelAddressFeedback
	case ActionIgnoreFeedback:
		return LabelIgnoreFeedback
	}
	return ""
}

// Block ids. Always set and always strings: slack-go only routes a
// block_actions payload whose block_id is a string.
const (
	BlockReviewActions   = "h9_review_actions"
	BlockApprovalActions = "h9_approval_actions"
	BlockChecklistStop   = "h9_checklist_stop"
	BlockResumeActions   = "h9_resume_actions"
	BlockRetryActions    = "h9_retry_actions"
	BlockBudgetActions   = "h9_budget_actions"
	BlockRepoActions     = "h9_repo_actions"
	BlockFeedbackActions = "h9_feedback_actions"
)

package render

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// The review as the bot posts it: the plan summary, then the ask with
// exactly four buttons.
func TestRenderReview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, summary string
		want          []string
	}{
		{"short", "1. read\n2. fix", []string{"1. read\n2. fix", "revision 3"}},
		{"empty", "  ", []string{"No summary"}},
		{"huge", strings.Repeat("a line of the plan & <!here>\n", 2000), []string{"…", "&amp;", "&lt;!here&gt;"}},
		{"one huge line", strings.Repeat("é", 50000), []string{"…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary, m := RenderPlanSummary(tc.summary), RenderReviewAsk("sess-1", 3)
			mustFit(t, summary)
			mustFit(t, m)
			for _, w := range tc.want {
				if !strings.Contains(allText(summary)+allText(m), w) {
					t.Errorf("missing %q", w)
				}
			}
			want := []struct {
				id, label string
				style     slack.Style
			}{
				{ActionApproveAuto, "Approve & auto-run", slack.StylePrimary},
				{ActionApproveConfirm, "Approve & confirm each step", ""},
				{ActionKeepPlanning, "Keep planning", ""},
				{ActionCancel, "Cancel", slack.StyleDanger},
			}
			bs := allButtons(m)
			if len(bs) != len(want) {
				t.Fatalf("%d buttons, want exactly 4", len(bs))
			}
			for i, w := range want {
				checkButton(t, bs[i], w.id, w.label, ButtonValue{SessionID: "sess-1", Revision: 3})
				if bs[i].Style != w.style {
					t.Errorf("%s style %q, want %q", w.id, bs[i].Style, w.style)
				}
			}
			if m.Blocks[len(m.Blocks)-1].ID() != BlockReviewActions {
				t.Errorf("actions block id %q", m.Blocks[len(m.Blocks)-1].ID())
			}
		})
	}
}

func TestRenderReviewDecided(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ user, label, want string }{
		{"U1", LabelApproveAuto, "<@U1> chose *Approve &amp; auto-run*."},
		{"U2", LabelCancel, "<@U2> chose *Cancel*."},
		{"<!channel>", "<@U9>", "someone chose *&lt;@U9&gt;*."},
	} {
		t.Run(tc.label, func(t *testing.T) {
			m := RenderReviewDecided(tc.user, tc.label)
			mustFit(t, m)
			if len(allButtons(m)) != 0 {
				t.Fatalf("decided review still has buttons")
			}
			if !strings.Contains(allText(m), tc.want) {
				t.Fatalf("missing %q in %q", tc.want, allText(m))
			}
		})
	}
}

func TestChoiceLabel(t *testing.T) {
	t.Parallel()
	for id, label := range map[string]string{
		ActionApproveAuto: LabelApproveAuto, ActionApproveConfirm: LabelApproveConfirm,
		ActionKeepPlanning: LabelKeepPlanning, ActionCancel: LabelCancel, ActionStop: LabelStop,
		ActionStepApprove: LabelStepApprove, ActionStepReject: LabelStepReject,
		ActionResume: LabelResume, ActionRetry: LabelRetry, "h9_unknown": "",
	} {
		if got := ChoiceLabel(id); got != label {
			t.Errorf("ChoiceLabel(%q) = %q, want %q", id, got, label)
		}
	}
}

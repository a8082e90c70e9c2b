package render

import (
	"strings"
	"testing"
)

func TestRenderApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, summary, preview string
		want                         []string
		blocks                       int
	}{
		{"bash", "bash", "go test ./...", "", []string{"`bash`", "```\ngo test ./...\n```"}, 3},
		{"edit with diff", "edit_file", "main.go", "-a\n+b <@U1>", []string{"`edit_file`", "main.go", "+b &lt;@U1&gt;"}, 4},
		{"huge preview", "write_file", strings.Repeat("p", 5000), strings.Repeat("```diff\n+x\n", 2000), []string{"…"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := RenderApproval("s1", "step-7", tc.tool, tc.summary, tc.preview)
			mustFit(t, m)
			if len(m.Blocks) != tc.blocks {
				t.Errorf("%d blocks, want %d", len(m.Blocks), tc.blocks)
			}
			for _, w := range tc.want {
				if !strings.Contains(allText(m), w) {
					t.Errorf("missing %q in %s", w, allText(m))
				}
			}
			bs := allButtons(m)
			if len(bs) != 2 {
				t.Fatalf("%d buttons, want Approve and Reject", len(bs))
			}
			v := ButtonValue{SessionID: "s1", StepID: "step-7"}
			checkButton(t, bs[0], ActionStepApprove, LabelStepApprove, v)
			checkButton(t, bs[1], ActionStepReject, LabelStepReject, v)
		})
	}
}

func TestRenderApprovalDecided(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		approved bool
		want     string
	}{
		{true, "✔ <@U1> approved `bash` `rm -rf build`"},
		{false, "⊘ <@U1> rejected `bash` `rm -rf build`"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			m := RenderApprovalDecided("U1", tc.approved, "bash", "rm -rf build")
			mustFit(t, m)
			if len(allButtons(m)) != 0 || !strings.Contains(allText(m), tc.want) {
				t.Fatalf("got %q", allText(m))
			}
		})
	}
}

// A bash step shows its command once; Plan: is not doubled in the text.
func TestBashApprovalShowsTheCommandOnce(t *testing.T) {
	t.Parallel()
	m := RenderApproval("s", "st", "bash", "go test ./...", "go test ./...")
	n := 0
	for _, s := range texts(m)[1:] {
		n += strings.Count(s, "go test ./...")
	}
	if n != 1 {
		t.Errorf("the command shows %d times in the blocks: %v", n, texts(m))
	}
	if got := RenderPlanSummary("Plan: write hello.txt").Text; got != "Plan: write hello.txt" {
		t.Errorf("plan text %q", got)
	}
}

package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// The channel's instructions come after AGENTS.md, marked as the
// channel's; the prompt names attachments and share_file, and a checkout's
// checkpoints.
func TestChannelInstructionsFollowAgentsMD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.wsDir("s")
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "Use tabs.")
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/h9/x\n")
	h.srv.Enqueue(fakemodel.Text("ok"))
	if _, _, err := h.run("s", "go", RunOptions{ChannelInstructions: "Never touch migrations."}); err != nil {
		t.Fatal(err)
	}
	sys := h.lastRequest().Messages[0].Content
	agents, channel := strings.Index(sys, "Use tabs."), strings.Index(sys, channelInstructionsHeading+"\nNever touch migrations.")
	if agents < 0 || channel < agents {
		t.Errorf("AGENTS.md at %d, the channel's instructions at %d, want them after it:\n%s", agents, channel, sys)
	}
	for _, want := range []string{AttachmentsDir + "/", "share_file", "checkpoint"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt does not mention %q", want)
		}
	}
}

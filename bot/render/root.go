package render

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/planning"
)

const maxRootTask = 2800

// RenderRoot is the channel message that starts a session: it names the user
// and the task, and its thread is the session.
func RenderRoot(userID, task string, mode planning.PlanMode) Message {
	verb := map[planning.PlanMode]string{
		planning.PlanModePlan:     "plan",
		planning.PlanModeAutoEdit: "work on (confirming each step)",
	}[mode]
	if verb == "" {
		verb = "run"
	}
	who := mention(userID)
	t := safeText(task, maxRootTask)
	if t == "" {
		t = "_untitled task_"
	}
	return Message{
		Text: who + " asked h9 to " + verb + ": " + safeLine(task, maxTextTask),
		Blocks: blocks(
			section("h9_root_who", "*h9* · "+who+" asked h9 to "+verb+":"),
			section("h9_root_task", t),
			contextLine("h9_root_hint", "Everything for this session happens in this thread; reply here to talk to it."),
		),
	}
}

// rootStartPrefix begins the block ID that carries a root message's start
// (WithStart): unseen by users, read back from the channel's history.
const rootStartPrefix = "h9_root_start_"

// WithStart marks a root message with its start's ID, so a process that
// stopped before the session's first commit can find the thread it began.
func WithStart(m Message, id string) Message {
	for _, b := range m.Blocks {
		if c, ok := b.(*slack.ContextBlock); ok && c.BlockID == "h9_root_hint" {
			c.BlockID = rootStartPrefix + id
		}
	}
	return m
}

// RootStart is the start ID a root message carries, or "".
func RootStart(m slack.Message) string {
	for _, b := range m.Blocks.BlockSet {
		if c, ok := b.(*slack.ContextBlock); ok && strings.HasPrefix(c.BlockID, rootStartPrefix) {
			return strings.TrimPrefix(c.BlockID, rootStartPrefix)
		}
	}
	return ""
}

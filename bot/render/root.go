package render

import "github.com/h9-app/h9/planning"

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

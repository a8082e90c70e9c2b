package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/h9-app/h9/planning"
	"github.com/slack-go/slack"
)

// Checklist is everything the live checklist message shows.
type Checklist struct {
	SessionID string
	Task      string
	Mode      planning.PlanMode // label: planning / executing / confirm-each-step
	State     string            // the session's state, as the bot words it
	Todos     []planning.TodoItem
	// Evidence is what h9 saw done for each completed todo, by id: shown
	// in a few words on its line.
	Evidence    map[string]planning.Evidence
	Spend       Spend         // the session's tokens so far
	Activity    string        // current activity while running, e.g. "bash: go test ./..."
	ActivityFor time.Duration // how long Activity has lasted; shown from a second on
	Running     bool          // show the Stop button
	Unsandboxed bool          // say the workspace is NOT sandboxed
	Repo        *RepoLine     // the session's repository and branch; nil = none
}

// Checklist layout budget. The message is edited on every todo snapshot and
// read on phones, so it stays well under the 50-block limit: at most
// checklistSections sections of todo lines, each line at most maxTodoLine
// units. A typical plan (tens of short todos) shows whole; a huge one shows
// the lines that matter most and "…and N more" (see selectTodos).
const (
	checklistSections = 6
	maxTodoLine       = 300
	maxTitleTask      = 400
	maxTextTask       = 200
	maxActivity       = 500
)

// ChecklistTitleBlockID marks a message as a session's checklist: the bot
// finds its checklist in a thread by it when it lost the message's ts.
const ChecklistTitleBlockID = "h9_cl_title"

const unsandboxedNote = ":warning: This workspace is *NOT sandboxed*: commands run directly on the bot's host."

// RenderChecklist renders the one checklist message of a session: title with
// task, mode, state and `x/y tasks`; one line per todo with the Planning module's
// icons, a completed todo's evidence on its line; the session's tokens;
// the current activity and a Stop button while running; a warning when
// unsandboxed. At most 11 blocks whatever the input.
func RenderChecklist(c Checklist) Message {
	p := planning.Summarize(c.Todos)
	bs := blocks(section(ChecklistTitleBlockID, checklistTitle(c, p)))
	if c.Unsandboxed {
		bs = append(bs, contextLine("h9_cl_sandbox", unsandboxedNote))
	}
	lines, hidden := todoLines(c.Todos, c.Evidence, packCapacity(checklistSections, maxTodoLine))
	if len(lines) == 0 {
		lines = []string{"_No todos yet._"}
	}
	bs = append(bs, packLines("h9_cl_todos", lines)...)
	if hidden.total() > 0 {
		bs = append(bs, contextLine("h9_cl_more", hidden.String()))
	}
	if c.Running {
		bs = append(bs,
			section("h9_cl_activity", "*Now:* "+activityText(c.Activity)+elapsedSuffix(c.Activity, c.ActivityFor)),
			actions(BlockChecklistStop, button(ActionStop, LabelStop, ButtonValue{SessionID: c.SessionID}, slack.StyleDanger)))
	}
	return Message{Text: checklistText(c, p, lines), Blocks: bs}
}

func checklistTitle(c Checklist, p planning.Progress) string {
	title := taskLine(c.Task, maxTitleTask) + "\n*Mode:* " + ModeLabel(c.Mode) +
		"  ·  *State:* " + stateLabel(c.State) + "  ·  *" + p.String() + "*" + spendSuffix(c.Spend)
	if c.Repo != nil {
		title += "\n" + c.Repo.Text()
	}
	return title
}

// taskLine is the task in bold, or a placeholder when there is none.
func taskLine(task string, max int) string {
	t := safeLine(task, max)
	if t == "" {
		return "_untitled task_"
	}
	return "*" + t + "*"
}

// checklistText is the fallback text: the title line and the same todo
// lines as the blocks, so clients and tools that read only text see the
// list too. It stays far below the 40,000 limit (lines are bounded above).
func checklistText(c Checklist, p planning.Progress, lines []string) string {
	task := safeLine(c.Task, maxTextTask)
	if task == "" {
		task = "untitled task"
	}
	// No "h9: " in front: Slack names the sender, and a client that
	// prefixes it would show it twice.
	head := task + " — " + p.String() + " · " + stateLabel(c.State) + " (" + ModeLabel(c.Mode) + ")"
	if s := c.Spend.String(); s != "" {
		head += " · " + s
	}
	if c.Repo != nil {
		head += " · " + c.Repo.plain()
	}
	return head + "\n" + strings.Join(lines, "\n")
}

// activityText shows the activity as inline code.
func activityText(a string) string {
	if OneLine(a) == "" {
		return "working…"
	}
	return inlineCode(a, maxActivity)
}

// elapsedSuffix is " · 35s" (" · 2m05s") once an activity has lasted a
// second, so a long command does not look frozen.
func elapsedSuffix(activity string, d time.Duration) string {
	if OneLine(activity) == "" || d < time.Second {
		return ""
	}
	d = d.Truncate(time.Second)
	if d < time.Minute {
		return " · " + d.String()
	}
	m := d / time.Minute
	return fmt.Sprintf(" · %dm%02ds", m, (d-m*time.Minute)/time.Second)
}

package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
	"github.com/slack-go/slack"
)

func todo(id, content string, s planning.TodoStatus) planning.TodoItem {
	return planning.TodoItem{ID: id, Content: content, Status: s}
}

// checklistCase is one checklist and what its message must (not) say.
type checklistCase struct {
	name    string
	c       Checklist
	want    []string // substrings of the blocks' text
	notWant []string
	stop    bool
}

// checklistMixed has a todo of each status.
var checklistMixed = []planning.TodoItem{
	todo("1", "read the code", planning.TodoCompleted),
	todo("2", "write the test", planning.TodoInProgress),
	todo("3", "fix the bug", planning.TodoPending),
	todo("4", "rewrite everything", planning.TodoCancelled),
}

var checklistCases = []checklistCase{
	{
		name: "planning", c: Checklist{SessionID: "s", Task: "fix flaky test", Mode: planning.PlanModePlan, State: "planning", Todos: checklistMixed},
		want:    []string{"fix flaky test", "planning", "1/4 tasks", "✔ read the code", "▶ write the test", "○ fix the bug", "⊘ rewrite everything"},
		notWant: []string{"Now:", "NOT sandboxed", "more"},
	},
	{
		name: "running", c: Checklist{SessionID: "s", Task: "t", Mode: planning.PlanModeDefault, State: "running", Todos: checklistMixed, Activity: "bash: go test ./...", Running: true},
		want: []string{"executing", "running", "*Now:* `bash: go test ./...`"}, stop: true,
	},
	{
		name: "confirm each step, unsandboxed", c: Checklist{SessionID: "s", Mode: planning.PlanModeAutoEdit, State: "awaiting approval", Unsandboxed: true, Running: true},
		want: []string{"confirm-each-step", "awaiting approval", "NOT sandboxed", "0/0 tasks", "No todos yet", "working…", "untitled task"}, stop: true,
	},
	{
		name: "done counts completed only", c: Checklist{SessionID: "s", Task: "t", State: "done", Todos: []planning.TodoItem{
			todo("1", "a", planning.TodoCompleted), todo("2", "b", planning.TodoInProgress), todo("3", "c", planning.TodoCancelled)}},
		want: []string{"1/3 tasks", "done"},
	},
	{
		name: "no state reads idle", c: Checklist{SessionID: "s", Task: "t"},
		want: []string{"idle"},
	},
}

func TestRenderChecklist(t *testing.T) {
	for _, tc := range checklistCases {
		t.Run(tc.name, func(t *testing.T) {
			m := RenderChecklist(tc.c)
			mustFit(t, m)
			text := allText(m)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("unexpected %q in:\n%s", w, text)
				}
			}
			p := planning.Summarize(tc.c.Todos)
			if !strings.Contains(m.Text, p.String()) {
				t.Errorf("fallback text %q lacks %q", m.Text, p.String())
			}
			bs := allButtons(m)
			if tc.stop != (len(bs) == 1) {
				t.Fatalf("buttons = %d, want Stop: %v", len(bs), tc.stop)
			}
			if tc.stop {
				checkButton(t, bs[0], ActionStop, LabelStop, ButtonValue{SessionID: "s"})
			}
		})
	}
}

func TestChecklistIcons(t *testing.T) {
	for status, icon := range map[planning.TodoStatus]string{
		planning.TodoCompleted: "✔", planning.TodoInProgress: "▶", planning.TodoPending: "○", planning.TodoCancelled: "⊘",
	} {
		t.Run(string(status), func(t *testing.T) {
			m := RenderChecklist(Checklist{SessionID: "s", Todos: []planning.TodoItem{todo("1", "the item", status)}})
			if !strings.Contains(allText(m), icon+" the item") {
				t.Fatalf("no %q line in %s", icon, allText(m))
			}
		})
	}
}

// bigPlan is 200 todos of 500 characters: 150 completed, 1 in progress, the rest pending.
func bigPlan() []planning.TodoItem {
	todos := make([]planning.TodoItem, 200)
	for i := range todos {
		s := planning.TodoPending
		switch {
		case i < 150:
			s = planning.TodoCompleted
		case i == 150:
			s = planning.TodoInProgress
		}
		id := fmt.Sprintf("t%03d", i)
		todos[i] = todo(id, id+" "+strings.Repeat("long <!channel> & content ", 20)[:495], s)
	}
	return todos
}

func TestChecklistHugePlanFits(t *testing.T) {
	m := RenderChecklist(Checklist{SessionID: "s", Task: strings.Repeat("task ", 2000), State: "running", Todos: bigPlan(),
		Running: true, Activity: strings.Repeat("x", 10000), Unsandboxed: true})
	mustFit(t, m)
	if len(m.Blocks) > 11 {
		t.Errorf("%d blocks, want few", len(m.Blocks))
	}
	text := allText(m)
	if !strings.Contains(text, "150/200 tasks") || !strings.Contains(m.Text, "150/200 tasks") {
		t.Errorf("counts missing")
	}
	if !strings.Contains(text, "…and ") || !strings.Contains(text, " more (") {
		t.Fatalf("no \"…and N more\" in:\n%s", text)
	}
	// Priority: the running item and the latest completed ones are shown,
	// the oldest completed ones are the ones left off.
	for _, id := range []string{"t150", "t149", "t145", "t151"} {
		if !strings.Contains(text, id+" ") {
			t.Errorf("%s should be shown", id)
		}
	}
	if strings.Contains(text, "t000 ") {
		t.Errorf("the oldest completed item should be left off first")
	}
	if strings.Contains(text, "<!channel>") {
		t.Errorf("unescaped mention")
	}
}

func TestChecklistShowsAllWhenItFits(t *testing.T) {
	long := "medium " + strings.Repeat("m", 53) // 60 characters
	for _, tc := range []struct {
		name    string
		n       int
		content string
		all     bool
	}{
		{"200 short", 200, "short", true},
		{"500 short", planning.MaxTodos, "short", true},
		{"500 medium", planning.MaxTodos, long, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			todos := make([]planning.TodoItem, tc.n)
			for i := range todos {
				todos[i] = todo(fmt.Sprint(i), tc.content, planning.TodoPending)
			}
			m := RenderChecklist(Checklist{SessionID: "s", Todos: todos})
			mustFit(t, m)
			if got, want := strings.Count(m.Text, "○ "+tc.content), strings.Count(allText(Message{Blocks: m.Blocks}), "○ "+tc.content); got != want {
				t.Errorf("fallback text shows %d todo lines, blocks %d", got, want)
			}
			shown := strings.Count(allText(Message{Blocks: m.Blocks}), "○ "+tc.content)
			if tc.all {
				if shown != tc.n || strings.Contains(allText(m), "more") {
					t.Fatalf("%d lines shown, want all %d", shown, tc.n)
				}
				return
			}
			hidden := tc.n - shown
			if want := fmt.Sprintf("…and %d more (%d ○ pending)", hidden, hidden); hidden == 0 || !strings.Contains(allText(m), want) {
				t.Fatalf("shown %d; no %q", shown, want)
			}
		})
	}
}

func TestChecklistEscapesTodos(t *testing.T) {
	evil := []string{"<!channel> deploy", "<!here>", "<@U123> please", "<https://evil|click>", "&amp;", "<!subteam^S1>"}
	var todos []planning.TodoItem
	for i, e := range evil {
		todos = append(todos, todo(fmt.Sprint(i), e, planning.TodoPending))
	}
	m := RenderChecklist(Checklist{SessionID: "s", Task: "<!channel>", Todos: todos, Activity: "<@U1>", Running: true})
	for _, s := range texts(m) {
		if strings.Contains(s, "<") {
			t.Fatalf("unescaped markup in %q", s)
		}
	}
	for _, e := range evil {
		if !strings.Contains(unescape(allText(m)), e) {
			t.Errorf("%q not shown literally", e)
		}
	}
}

func checkButton(t *testing.T, b *slack.ButtonBlockElement, actionID, label string, want ButtonValue) {
	t.Helper()
	if b.ActionID != actionID || b.Text.Text != label {
		t.Errorf("button %q %q, want %q %q", b.ActionID, b.Text.Text, actionID, label)
	}
	got, err := DecodeButtonValue(b.Value)
	if err != nil || got != want {
		t.Errorf("button %q value %+v, %v; want %+v", actionID, got, err, want)
	}
}

// The checklist's text begins with its task: Slack names the sender, so
// an "h9: " of its own would show twice ("h9: h9: add a greeting").
func TestChecklistTextIsNotPrefixed(t *testing.T) {
	t.Parallel()
	m := RenderChecklist(Checklist{SessionID: "s1", Task: "add a greeting", State: "done"})
	if !strings.HasPrefix(m.Text, "add a greeting — ") {
		t.Errorf("the checklist's text begins %q", m.Text)
	}
}

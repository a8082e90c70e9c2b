package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

func TestTokenCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{
		0: "0", 1: "1", 999: "999", 1000: "1k", 1049: "1k", 1050: "1.1k", 12_345: "12.3k", 99_949: "99.9k",
		99_950: "100k", 123_456: "123k", 999_499: "999k", 999_500: "1M", 1_250_000: "1.3M", 99_949_999: "99.9M",
		99_950_000: "100M", 2_000_000_000: "2000M",
	} {
		if got := TokenCount(n); got != want {
			t.Errorf("TokenCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSpendString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Spend
		want string
	}{
		{Spend{}, ""},
		{Spend{Tokens: 1}, "1 token"},
		{Spend{Tokens: 12_345}, "12.3k tokens"},
		{Spend{Tokens: 12_345, Estimated: true}, "~12.3k tokens"},
		{Spend{Tokens: 12_345, Cost: 0.0412, Priced: true}, "12.3k tokens · $0.04"},
		{Spend{Tokens: 800, Cost: 0.0004, Priced: true}, "800 tokens · <$0.01"},
		{Spend{Tokens: 800, Cost: 0, Priced: true}, "800 tokens · $0.00"},
		{Spend{Tokens: 3_000_000, Cost: 12.345, Priced: true}, "3M tokens · $12.35"},
		{Spend{Tokens: 10, Cost: 1, Priced: false}, "10 tokens"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func exitCode(n int) *int { return &n }

// A completed todo's line names its evidence, after the todo; other
// lines show none, whatever the map says.
func TestChecklistShowsEvidence(t *testing.T) {
	t.Parallel()
	todos := []planning.TodoItem{
		todo("a", "Create hello.txt", planning.TodoCompleted),
		todo("b", "Run the tests", planning.TodoCompleted),
		todo("c", "Commit", planning.TodoCompleted),
		todo("d", "Deploy", planning.TodoInProgress),
		todo("e", "Old one", planning.TodoCompleted),
	}
	evidence := map[string]planning.Evidence{
		"a": {Made: 1, Succeeded: 1, Calls: []planning.ToolRun{{Tool: "write_file", Target: "hello.txt"}}},
		"b": {Made: 5, Succeeded: 4, Calls: []planning.ToolRun{
			{Tool: "edit_file", Target: "a.go"}, {Tool: "bash", Target: "go test ./...", Failed: true, Exit: exitCode(1)},
			{Tool: "edit_file", Target: "a.go"}, {Tool: "bash", Target: "go test ./...", Exit: exitCode(0)}}},
		"c": {Made: 1, Succeeded: 1, Calls: []planning.ToolRun{{Tool: "bash", Target: "make", Exit: exitCode(0)}},
			Checkpoint: &planning.Checkpoint{Commit: "a1b2c3d", Added: 12, Deleted: 3}},
		"d": {Made: 1, Succeeded: 1, Calls: []planning.ToolRun{{Tool: "bash", Target: "deploy", Exit: exitCode(0)}}},
	}
	m := RenderChecklist(Checklist{SessionID: "s", Task: "t", State: "running", Todos: todos, Evidence: evidence,
		Spend: Spend{Tokens: 12_345, Cost: 0.04, Priced: true}})
	mustFit(t, m)
	text := allText(m)
	for _, want := range []string{
		"✔ Create hello.txt — write_file hello.txt",
		"✔ Run the tests — +3 earlier · edit_file a.go · bash go test ./... ✓",
		"✔ Commit — bash make ✓ · a1b2c3d +12 −3",
		"▶ Deploy\n", "✔ Old one",
		"12.3k tokens · $0.04",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("checklist lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "deploy`") {
		t.Error("an in_progress todo shows evidence")
	}
	if !strings.Contains(m.Text, "write_file hello.txt") || !strings.Contains(m.Text, "12.3k tokens") {
		t.Errorf("fallback text lacks the evidence or the tokens: %q", m.Text)
	}
}

// Evidence comes from the model's arguments (paths, commands): it is
// escaped, it cannot open a code span, and the line stays
// within its cap however long everything is.
func TestEvidenceIsSafeAndBounded(t *testing.T) {
	t.Parallel()
	hostile := "<!channel> `rm -rf` & " + strings.Repeat("x", 500)
	var todos []planning.TodoItem
	evidence := map[string]planning.Evidence{}
	for i := range 200 {
		id := fmt.Sprint(i)
		todos = append(todos, todo(id, strings.Repeat("long todo ", 60), planning.TodoCompleted))
		evidence[id] = planning.Evidence{Made: 1 << 30, Succeeded: 1, Calls: []planning.ToolRun{
			{Tool: hostile, Target: hostile, Failed: true, Exit: exitCode(-1 << 31)},
			{Tool: hostile, Target: hostile, Exit: exitCode(0)}},
			Checkpoint: &planning.Checkpoint{Commit: hostile, Added: 1 << 40, Deleted: 1 << 40}}
	}
	m := RenderChecklist(Checklist{SessionID: "s", Todos: todos, Evidence: evidence})
	mustFit(t, m)
	for _, s := range texts(m) {
		if strings.Contains(s, "<") {
			t.Fatalf("unescaped markup in %q", s)
		}
	}
	for _, line := range todoLinesOf(m) {
		if Len(line) > maxTodoLine {
			t.Fatalf("line of %d units: %q", Len(line), line)
		}
		if strings.Count(line, "`")%2 != 0 {
			t.Fatalf("a code span is not closed: %q", line)
		}
		if !strings.Contains(line, " — ") || !strings.Contains(line, "+") {
			t.Fatalf("evidence or checkpoint missing on %q", line)
		}
	}
}

func todoLinesOf(m Message) []string {
	var out []string
	for _, l := range strings.Split(allText(Message{Blocks: m.Blocks}), "\n") {
		if strings.HasPrefix(l, IconCompleted+" ") {
			out = append(out, l)
		}
	}
	return out
}

func TestRenderBudget(t *testing.T) {
	t.Parallel()
	m := RenderBudget("s9", Spend{Tokens: 10_400, Cost: 0.03, Priced: true}, 10_000, 10_000)
	mustFit(t, m)
	text := allText(m)
	for _, want := range []string{"budget", "10.4k tokens · $0.03", "budget of 10k tokens", "Raise budget", "10k more"} {
		if !strings.Contains(text, want) || !strings.Contains(m.Text, "budget") {
			t.Errorf("budget message lacks %q: %s", want, text)
		}
	}
	bs := allButtons(m)
	if len(bs) != 1 {
		t.Fatalf("buttons = %d, want Raise budget", len(bs))
	}
	checkButton(t, bs[0], ActionRaiseBudget, LabelRaiseBudget, ButtonValue{SessionID: "s9"})
	raised := RenderBudgetRaised("U2", 20_000)
	mustFit(t, raised)
	if len(allButtons(raised)) != 0 || !strings.Contains(raised.Text, "<@U2>") || !strings.Contains(raised.Text, "20k tokens") {
		t.Errorf("raised message: %q", raised.Text)
	}
	if lifted := RenderBudgetRaised("U2", 0); !strings.Contains(lifted.Text, "no budget is set") {
		t.Errorf("a raise with the budget switched off: %q", lifted.Text)
	}
}

func TestWithSpend(t *testing.T) {
	t.Parallel()
	done := RenderDone("All green.", planning.Progress{Completed: 1, Total: 1})
	if got := WithSpend(done, Spend{}); len(got.Blocks) != len(done.Blocks) || got.Text != done.Text {
		t.Error("no tokens yet should change nothing")
	}
	got := WithSpend(done, Spend{Tokens: 1234, Cost: 0.01, Priced: true})
	mustFit(t, got)
	if !strings.Contains(allText(got), "1.2k tokens · $0.01") || !strings.HasSuffix(got.Text, "(1.2k tokens · $0.01)") {
		t.Errorf("spend missing: %q / %s", got.Text, allText(got))
	}
	huge := WithSpend(Message{Text: strings.Repeat("x", MaxMessageText)}, Spend{Tokens: 5})
	if err := CheckLimits(huge); err != nil {
		t.Errorf("a full text with its spend: %v", err)
	}
}

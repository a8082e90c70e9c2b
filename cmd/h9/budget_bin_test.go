package main

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// The token settings reach the bot: the real binary stops a session at
// H9_SESSION_TOKEN_BUDGET with its cost at H9_PRICE_*, and after kill -9
// Raise budget goes on where it stopped, the ✔ line naming its work.
func TestBinaryBudgetAndCost(t *testing.T) {
	e := newBinEnv(t, "H9_SESSION_TOKEN_BUDGET=300", "H9_PRICE_INPUT=10000", "H9_PRICE_OUTPUT=20000")
	e.start()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress")).WithUsage(100, 5),
		fakemodel.ToolCall("bash", `{"command":"echo made > made.txt"}`).WithUsage(200, 5), // 310 > 300
	)
	thread := e.slash("run spend a little")
	budget := e.waitMsg(thread, "h9_budget", 1)
	if want := "310 tokens · $3.20"; !strings.Contains(budget.Text, want) { // 300 × $0.01 + 10 × $0.02
		t.Errorf("budget message %q lacks %q", budget.Text, want)
	}
	e.waitChecklist(thread, "over budget", "310 tokens")

	e.restart()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:completed")).WithUsage(50, 5),
		fakemodel.Text("Made it.").WithUsage(50, 5),
	)
	e.click(budget.TS, render.ActionRaiseBudget)
	done := e.waitMsg(thread, "Made it.", 1)
	e.waitChecklist(thread, "✔ task a — bash echo made &gt; made.txt ✓", "1/1 tasks", "done", "420 tokens · $4.40")
	if !strings.Contains(done.Text, "420 tokens · $4.40") {
		t.Errorf("Done message %q lacks the final total", done.Text)
	}
}

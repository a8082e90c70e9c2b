package bot

import (
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// reportedTotal is what the fake model reported in all, in tokens.
func (e *env) reportedTotal() (prompt, completion int) { return e.model.Reported() }

func withPrices(in, out float64) func(*Config) {
	return func(c *Config) { c.PriceInput, c.PriceOutput = in, out }
}

func withBudget(n int) func(*Config) { return func(c *Config) { c.SessionTokenBudget = n } }

// A ✔ needs work: a completion with none is refused and the model reads
// why; after a write it is accepted, and its line names the write. The
// tokens shown — checklist, Done, /h9 status, the Home tab — are the sum
// the endpoint reported, planning included, with their cost.
func TestCompletionNeedsWorkAndTokensAddUp(t *testing.T) {
	e := newEnv(t, withPrices(10_000, 20_000))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:pending")).WithUsage(100, 10),
		fakemodel.Text("Plan: write hello.txt.").WithUsage(110, 7),
	)
	thread := e.startSession("plan", "say hello")
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(120, 10),
		fakemodel.ToolCall("todo_write", todos("a:completed")).WithUsage(130, 10),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`).WithUsage(140, 20),
		fakemodel.ToolCall("todo_write", todos("a:completed")).WithUsage(150, 10),
		fakemodel.Text("Wrote hello.txt.").WithUsage(160, 20),
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	done := e.waitMessage(thread, "Wrote hello.txt.", 1)

	var refusal string
	for _, r := range toolResultsOf(e.model.Requests()[4]) {
		if strings.HasPrefix(r, "Error:") {
			refusal = r
		}
	}
	for _, want := range []string{"Error:", `todo "a" (`, "cannot be marked completed", "since it was marked in_progress"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal the model read, %q, does not say %q", refusal, want)
		}
	}
	prompt, completion := e.reportedTotal()
	if prompt != 910 || completion != 87 {
		t.Fatalf("the fake reported %d + %d tokens, want 910 + 87", prompt, completion)
	}
	total := "997 tokens · $10.84" // 910 × $10,000/M + 87 × $20,000/M
	e.waitChecklist(thread, "✔ task a — write_file hello.txt", "1/1 tasks", "done", total)
	if !strings.Contains(done.Text, total) || !strings.Contains(string(done.Blocks), total) {
		t.Errorf("Done message lacks %q: %q", total, done.Text)
	}

	e.slash(testUser, testChannel, "status")
	e.waitEphemeral(testChannel, testUser, total)
	if err := e.slack.OpenHome(e.ctx, testUser); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the Home tab's total", func() bool {
		return strings.Contains(string(e.slack.HomeView(testUser)), "Your sessions have used "+total+" in all")
	})
}

func toolResultsOf(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// Past its budget the run stops after its step: no further model request,
// a message with the word budget and Raise budget. A non-owner's click is
// refused; the owner's goes on where it stopped (no new prompt) with
// auto-run on, to Done.
func TestBudgetStopAndRaise(t *testing.T) {
	e := newEnv(t, withBudget(500))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(200, 10),
		fakemodel.ToolCall("bash", `{"command":"echo working"}`).WithUsage(300, 10), // 520 > 500
	)
	thread := e.startSession("run", "spend tokens")
	msg := e.waitMessage(thread, "h9_budget", 1)
	if !strings.Contains(msg.Text, "budget") || !strings.Contains(blocksText(msg), render.LabelRaiseBudget) || !strings.Contains(msg.Text, "520 tokens") {
		t.Errorf("budget message: %q %s", msg.Text, msg.Blocks)
	}
	e.waitChecklist(thread, "over budget", "520 tokens")
	if got := e.model.Calls(); got != 2 {
		t.Fatalf("model calls = %d, want 2: none after the budget was passed", got)
	}

	e.click("U2", msg.TS, render.ActionRaiseBudget)
	e.waitEphemeral(testChannel, "U2", "Only <@"+testUser+">")

	e.model.Enqueue(worked("a:completed").WithUsage(100, 5), fakemodel.Text("Finished.").WithUsage(100, 5))
	e.click(testUser, msg.TS, render.ActionRaiseBudget)
	e.waitMessage(thread, "Finished.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done", "730 tokens")
	if got := e.model.Calls(); got != 4 {
		t.Errorf("model calls = %d, want 4 (the refused click asked nothing)", got)
	}
	goOn := e.model.Requests()[2].Messages
	if last := goOn[len(goOn)-1]; last.Role != openai.ChatMessageRoleTool || !strings.Contains(last.Content, "working") {
		t.Errorf("the raised run asked with %s %q last, want the stored bash result and no new prompt", last.Role, last.Content)
	}
	if raised, _ := e.slack.Message(testChannel, msg.TS); !strings.Contains(raised.Text, "raised by <@"+testUser+"> to 1k tokens") ||
		strings.Contains(string(raised.Blocks), render.ActionRaiseBudget) {
		t.Errorf("budget message not replaced once raised: %q", raised.Text)
	}
}

// A restart in the middle: work done before it counts after it, the ✔
// lines keep their evidence, an over-budget session stays stopped, a reply
// waits, and Raise budget works on the new process.
func TestProgressSurvivesARestart(t *testing.T) {
	e := newEnv(t, withBudget(1000))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:pending")).WithUsage(100, 10),
		fakemodel.ToolCall("write_file", `{"path":"a.txt","content":"a"}`).WithUsage(100, 10),
		fakemodel.Text("never").WithLatency(time.Minute),
	)
	thread := e.startSession("run", "two files")
	e.waitFor("the slow model request", func() bool { return e.model.Calls() == 3 })

	e.model.Enqueue( // the resumed run: a's work was before the restart
		fakemodel.ToolCall("todo_write", todos("a:completed", "b:in_progress")).WithUsage(400, 10),
		fakemodel.ToolCall("bash", `{"command":"echo b > b.txt"}`).WithUsage(500, 10), // 1140 > 1000
	)
	e.restart()
	e.waitMessage(thread, "h9_budget", 1)
	e.waitChecklist(thread, "✔ task a — write_file a.txt", "over budget", "1.1k tokens")
	if refusals := toolResultsOf(e.model.Requests()[3]); len(refusals) > 0 && strings.HasPrefix(refusals[len(refusals)-1], "Error") {
		t.Fatalf("work from before the restart did not count: %q", refusals[len(refusals)-1])
	}

	e.restart()
	replyTS := e.reply(testUser, thread, "then stop")
	e.waitEphemeral(testChannel, testUser, "token budget")
	e.waitFor("the reply queued", func() bool {
		m, _ := e.slack.Message(testChannel, replyTS)
		return slices.Contains(m.Reactions, reactionQueued)
	})
	e.waitChecklist(thread, "✔ task a — write_file a.txt", "over budget")

	e.model.Enqueue(
		worked("a:completed", "b:completed").WithUsage(50, 5),
		fakemodel.Text("Both written.").WithUsage(50, 5),
		fakemodel.Text("Stopped, as asked.").WithUsage(50, 5),
	)
	e.click(testUser, e.waitMessage(thread, "h9_budget", 1).TS, render.ActionRaiseBudget)
	e.waitMessage(thread, "Stopped, as asked.", 1)
	e.waitChecklist(thread, "✔ task a — write_file a.txt", "✔ task b — bash echo b &gt; b.txt ✓ · write_file work.txt", "2/2 tasks")
	if got := e.lastUserMessage(-1); got != "then stop" {
		t.Errorf("the queued reply ran as %q", got)
	}
}

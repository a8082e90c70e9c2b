package main

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// kill -9 of the replica running a session: the other takes the session
// over once its lease lapses (within 2 × H9_LEASE_TTL), resumes it as a
// restart does on the same checklist, and /h9 status on it tells the
// truth. Nothing ran twice, nothing was posted twice.
func TestFleetBinaryKillMidRun(t *testing.T) {
	f := newFleetBin(t)
	f.start("r1")
	metrics := "http://" + freeLoopbackAddr(t) + "/metrics"
	f.start("r2", "H9_HTTP_ADDR="+strings.TrimSuffix(strings.TrimPrefix(metrics, "http://"), "/metrics"))
	f.slack.Prefer("r1")
	f.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress", "b:pending")),
		worked("a:completed", "b:pending"),
		blocked(),
	)
	thread := f.slash("run fleet kill")
	f.waitCalls(3)
	f.model.Enqueue(worked("a:completed", "b:completed"), fakemodel.Text("Finished after the kill."))
	killed := time.Now()
	f.signal("r1", syscall.SIGKILL)
	f.slack.Prefer("")
	f.waitMsg(thread, restartedWords, 1)
	t.Logf("r2 resumed the session %v after r1 was killed (H9_LEASE_TTL %v)", time.Since(killed).Round(time.Millisecond), fleetTTL)
	f.waitMsg(thread, "Finished after the kill.", 1)
	f.waitChecklist(thread, "2/2 tasks", "done")
	f.slash("status")
	f.waitEphemeral("fleet kill", "2/2 tasks", "done")
	f.checkThread(thread, restartedWords, "Finished after the kill.")
	if n := f.model.Unscripted(); n != 0 {
		t.Errorf("%d unscripted model requests (a run was repeated)", n)
	}
	// r1 is dead, so r2 answered; a slash command is answered through its
	// response_url, which no replica's API URL carries.
	if len(f.slack.Calls("response_url")) == 0 {
		t.Error("the status answer did not come through the command's response_url")
	}
	m := scrapeURL(t, metrics) // r2 counts the takeover among its lease changes
	if v := m.value("h9_lease_changes_total", "change", "taken_over"); v != 1 {
		t.Errorf("r2's taken_over lease changes = %v, want 1", v)
	}
	// The release follows the session's last save and its last Slack
	// write (the agent status), so it may land just after the answer.
	for deadline := time.Now().Add(10 * time.Second); m.value("h9_lease_changes_total", "change", "released") < 1 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		m = scrapeURL(t, metrics)
	}
	if v := m.value("h9_lease_changes_total", "change", "released"); v < 1 {
		t.Errorf("r2's released lease changes = %v within 10s: it gives the lease up once the session rests", v)
	}
}

// A replica paused past its lease (SIGSTOP) while its run's model request
// is in flight: the other replica takes the session over and finishes it;
// when the paused one resumes (SIGCONT) and its model answer arrives, it
// writes nothing to the database and posts nothing to Slack.
func TestFleetBinaryPausedReplicaWritesNothing(t *testing.T) {
	f := newFleetBin(t)
	f.slack.SetAckTimeout(time.Second) // what Slack sends the paused replica goes to the other
	f.start("r1")
	f.start("r2")
	f.slack.Prefer("r1")
	f.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress")),
		fakemodel.Text("Stale answer from the paused replica.").WithLatency(3*fleetTTL),
	)
	thread := f.slash("run fleet pause")
	f.waitCalls(2)
	f.signal("r1", syscall.SIGSTOP)
	f.slack.Prefer("r2")
	f.model.Enqueue(worked("a:completed"), fakemodel.Text("Finished on r2."))
	f.waitMsg(thread, "Finished on r2.", 1)
	f.waitChecklist(thread, "1/1 tasks", "done")
	moved := f.firstWrite("r2", "h9_leases")
	resumed := time.Now()
	f.signal("r1", syscall.SIGCONT)
	// r1's model answer arrives within 3 TTLs of its request; then its run
	// tries to store it.
	f.waitFor("r1 dropping the session", func() bool {
		return strings.Contains(f.procs["r1"].logs.String(), "dropping the session")
	})
	// Stop r1 and wait for it to exit: a graceful stop waits for its runs
	// and actors, so whatever r1 still had is written or posted by then.
	f.stopGracefully("r1")
	if w := f.audit("r1", "", moved); len(w) > 0 {
		t.Errorf("r1 wrote to the database after its lease moved:\n%s", strings.Join(w, "\n"))
	}
	if w := f.slackWritesBy("r1", resumed); len(w) > 0 {
		t.Errorf("r1 posted to Slack after it resumed: %q", w)
	}
	f.checkThread(thread, "Finished on r2.")
	if n := len(f.msgs(thread, "Stale answer")); n != 0 {
		t.Error("the paused replica's answer reached the thread")
	}
}

// Three replicas: an envelope sent to all of them runs once, sessions
// spread over them, and when one is killed the others finish its
// sessions; every session finishes once, on one checklist.
func TestFleetBinaryThreeReplicas(t *testing.T) {
	f := newFleetBin(t)
	f.model.SetHandler(perTaskScript)
	for _, r := range []string{"r1", "r2", "r3"} {
		f.start(r)
	}
	f.slack.Fanout(3)
	once := f.slash("run fanned out to all")
	f.waitMsg(once, "Finished fanned out to all.", 1)
	f.slack.Fanout(1)

	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			if _, err := f.slack.SlashCommand(f.ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("run spread %d", i), UserID: "U1", ChannelID: "C1"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	threads := make([]string, 6)
	for i := range threads {
		threads[i] = f.rootOf(fmt.Sprintf("run: spread %d", i))
	}
	// Every spread session's record is stored (its first model answer came
	// after the record's commit, as the run's gate waits for it) and one
	// replica is in the middle of one: kill that one.
	var victim string
	f.waitFor("every session under way, one mid-run", func() bool {
		victim = f.midRun(threads)
		return f.allUnderWay(threads) && victim != ""
	})
	f.signal(victim, syscall.SIGKILL)
	for _, th := range append(threads, once) {
		f.waitChecklist(th, "2/2 tasks", "done")
		f.waitMsg(th, "Finished ", 1) // the checklist's last edit comes before the outcome
		f.checkThread(th, "Finished ")
	}
}

// rootOf waits for the root message whose text carries task and returns its ts.
func (f *fleetBin) rootOf(task string) string {
	f.t.Helper()
	var ts string
	f.waitFor("the root of "+task, func() bool {
		for _, m := range f.roots() {
			if strings.Contains(m.Text, task) {
				ts = m.TS
				return true
			}
		}
		return false
	})
	return ts
}

// allUnderWay reports whether every thread's checklist shows its todos.
func (f *fleetBin) allUnderWay(threads []string) bool {
	for _, th := range threads {
		if ms := f.msgs(th, "h9_cl_title"); len(ms) != 1 || !strings.Contains(ms[0].Text, "/2 tasks") {
			return false
		}
	}
	return true
}

// midRun names a replica whose latest checklist edit of one of threads
// shows a run half done, "" when none.
func (f *fleetBin) midRun(threads []string) string {
	latest := map[string]fakeslack.Call{} // checklist ts → its latest edit
	for _, c := range f.slack.Calls("chat.update") {
		latest[c.Params["ts"]] = c
	}
	for _, th := range threads {
		ms := f.msgs(th, "h9_cl_title")
		if len(ms) != 1 {
			continue
		}
		if c, ok := latest[ms[0].TS]; ok && strings.Contains(c.Params["text"], "1/2 tasks") {
			return c.Replica
		}
	}
	return ""
}

// perTaskScript is every session's run, from its history alone (so a
// resumed run goes on where it was): start a, work, complete a, work,
// complete b, finish; 300 ms per request, so that a kill lands mid-run.
func perTaskScript(req openai.ChatCompletionRequest) fakemodel.Reply {
	task, steps := "", 0
	for _, m := range req.Messages {
		switch {
		case m.Role == openai.ChatMessageRoleUser && task == "":
			task = m.Content
		case m.Role == openai.ChatMessageRoleTool:
			steps++
		}
	}
	script := []fakemodel.Reply{
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress", "b:pending")),
		fakemodel.ToolCall("bash", `{"command":"true"}`),
		fakemodel.ToolCall("todo_write", todoArgs("a:completed", "b:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"true"}`),
		fakemodel.ToolCall("todo_write", todoArgs("a:completed", "b:completed")),
	}
	r := fakemodel.Text("Finished " + task + ".")
	if steps < len(script) {
		r = script[steps]
	}
	return r.WithLatency(300 * time.Millisecond)
}

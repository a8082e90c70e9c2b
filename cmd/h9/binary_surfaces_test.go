package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// Slack's agent surfaces through the real binary (ARCHITECTURE.md,
// "Slack's agent surfaces"): the session's status, Slack's own Stop, the
// run's text streaming into the thread, the fallback where Slack refuses,
// a stream left open by a killed process, and a fleet where only the
// lease holder calls.

const (
	methodSetStatus   = "agents.sessions.setStatus"
	methodStartStream = "chat.startStream"
	methodAppend      = "chat.appendStream"
	methodStopStream  = "chat.stopStream"
)

// surfaceMethods are every method of the surfaces.
var surfaceMethods = []string{methodSetStatus, "agents.sessions.rename", methodStartStream, methodAppend, methodStopStream}

// slowWords is n words unique to tag, as a model answer that streams in
// many pieces with a pause before each.
func slowWords(tag string, n int) (string, fakemodel.Reply) {
	var b strings.Builder
	for i := range n {
		b.WriteString(tag)
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteByte(' ')
	}
	words := strings.TrimSpace(b.String())
	r := fakemodel.Text(words)
	r.ChunkGap = 5 * time.Millisecond
	return words, r
}

// saying is reply r with the text words, streamed.
func saying(r fakemodel.Reply, words string) fakemodel.Reply {
	r.Content, r.ChunkGap = words, 5*time.Millisecond
	return r
}

// waitStatuses waits until thread's agent session has shown want, in
// order, and checks one call per change in that thread: a setStatus, or
// the session_status of the chat.stopStream that ended a run's stream.
func (e *binEnv) waitStatuses(thread string, want ...string) {
	e.t.Helper()
	e.waitFor("statuses "+strings.Join(want, " → "), func() bool {
		return slices.Equal(e.slack.StatusSequence("C1", thread), want)
	})
	a, _ := e.slack.AgentSession("C1", thread)
	var set []string
	for _, c := range a.History {
		set = append(set, c.Method+" "+c.Status)
	}
	if len(set) != len(want) {
		e.t.Errorf("thread %s: status set by %v for the changes %v", thread, set, want)
	}
}

// streamedTexts are the texts the streams carried, in the order they
// started: each chat.startStream's markdown_text, the appends to its ts and
// the last piece its chat.stopStream carried (a test streams in one thread
// at a time).
func streamedTexts(s *fakeslack.Server) (texts []string, stops []string) {
	byTS := map[string]int{}
	for _, c := range s.Calls("") {
		switch c.Method {
		case methodStartStream:
			if c.SlackError == "" {
				texts = append(texts, c.Params["markdown_text"])
			}
		case methodAppend, methodStopStream:
			i, seen := byTS[c.Params["ts"]]
			if !seen && len(texts) == 0 {
				continue
			}
			if !seen {
				i = len(texts) - 1
				byTS[c.Params["ts"]] = i
			}
			texts[i] += c.Params["markdown_text"]
			if c.Method == methodStopStream {
				stops = append(stops, c.Params["ts"])
			}
		}
	}
	return texts, stops
}

// noStreamLeft checks that the thread holds no streamed message: each was
// stopped and deleted once the words went out as today's posts.
func (e *binEnv) noStreamLeft(thread string) {
	e.t.Helper()
	e.waitFor("no streamed message left", func() bool {
		for _, m := range e.slack.Thread("C1", thread) {
			if m.Streamed {
				return false
			}
		}
		return true
	})
}

// A planned and approved session: processing → suspended at the review →
// processing → active, one call per change; the plan run and the
// execution run each stream their text in one stream (one start, one
// stop), and the thread ends with today's posts of the model's words,
// each once. Cancel on another session closes it.
func TestBinarySurfacesPlannedApprovedSession(t *testing.T) {
	e := newBinEnv(t)
	e.start()
	plan, planReply := slowWords("planword", 30)
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:pending", "b:pending")), planReply)
	thread := e.slash("plan build the thing")
	review := e.waitMsg(thread, render.ActionApproveAuto, 1)
	e.waitStatuses(thread, "processing", "suspended")
	if a, _ := e.slack.AgentSession("C1", thread); a.Title != "build the thing" || a.Initiator != "U1" {
		t.Errorf("session title %q, initiator %q; want the task and its owner", a.Title, a.Initiator)
	}

	stepOne, _ := slowWords("stepone", 20)
	stepTwo, _ := slowWords("steptwo", 20)
	final, finalReply := slowWords("finalword", 30)
	e.model.Enqueue(
		saying(worked("a:completed", "b:in_progress"), stepOne),
		saying(worked("a:completed", "b:completed"), stepTwo),
		finalReply,
	)
	e.click(review.TS, render.ActionApproveAuto)
	done := e.waitMsg(thread, "finalwordx", 1)
	if done.Streamed || !strings.Contains(done.Text+string(done.Blocks), final) {
		t.Errorf("the Done message %q is not today's post of the model's words %q", done.Text, final)
	}
	e.waitChecklist(thread, "2/2 tasks", "done")
	e.waitStatuses(thread, "processing", "suspended", "processing", "active")
	e.noStreamLeft(thread)

	texts, stops := streamedTexts(e.slack)
	want := []string{render.Escape(plan), render.Escape(stepOne + "\n\n" + stepTwo + "\n\n" + final)}
	if !slices.Equal(texts, want) {
		t.Errorf("the streams carried %q,\nwant the plan run's and the execution run's text %q", texts, want)
	}
	if len(stops) != len(want) {
		t.Errorf("%d stopStream calls for %d runs' streams", len(stops), len(want))
	}
	// Each run's stop carried the status the session then was in
	// (suspended at the review, active when done); setStatus told only
	// each run's start.
	var set, carried []string
	for _, c := range e.slack.Calls(methodSetStatus) {
		if c.Params["thread_ts"] == thread {
			set = append(set, c.Params["status"])
		}
	}
	for _, c := range e.slack.Calls("chat.stopStream") {
		carried = append(carried, c.Params["session_status"])
	}
	if !slices.Equal(set, []string{"processing", "processing"}) || !slices.Equal(carried, []string{"suspended", "active"}) {
		t.Errorf("setStatus told %v and the stops carried %v; want processing at each run's start, then suspended and active on the stops", set, carried)
	}
	for _, marker := range []string{"planwordx", "finalwordx"} {
		if n := len(e.msgs(thread, marker)); n != 1 {
			t.Errorf("%q is in %d messages of the thread, want 1 (today's post)", marker, n)
		}
	}

	// Cancel at the review closes the agent session.
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:pending")), fakemodel.Text("Plan two."))
	other := e.slash("plan maybe later")
	e.click(e.waitMsg(other, render.ActionCancel, 1).TS, render.ActionCancel)
	e.waitChecklist(other, "cancelled")
	e.waitStatuses(other, "processing", "suspended", "closed")
	e.stop()
}

// Slack's Stop: from someone else it is refused privately and the run
// goes on; from the owner the run stops, the thread says who, and the
// status moves to the session's real one.
func TestBinarySurfacesNativeStop(t *testing.T) {
	e := newBinEnv(t)
	replies, done := make(chan fakemodel.Reply), make(chan struct{})
	t.Cleanup(func() { close(done) }) // before the fakes close: no request waits on
	e.model.SetHandler(func(openai.ChatCompletionRequest) fakemodel.Reply {
		select {
		case r := <-replies:
			return r
		case <-done:
			return fakemodel.ServerError()
		}
	})
	e.start()
	thread := e.slash("run a long job")
	e.waitCalls(1)
	e.waitStatuses(thread, "processing")

	if _, err := e.slack.PressStop(e.ctx, "U2", "C1", thread); err != nil {
		t.Fatal(err)
	}
	e.fakes.WaitEphemeral("C1", "U2", "can stop it, so it goes on")
	replies <- fakemodel.ToolCall("todo_write", todoArgs("a:in_progress"))
	e.waitCalls(2)
	if n := len(e.msgs(thread, "Stopped by")); n != 0 {
		t.Fatal("someone else's Stop stopped the run")
	}
	if got := e.slack.StatusSequence("C1", thread); !slices.Equal(got, []string{"processing"}) {
		t.Errorf("statuses %v after a refused Stop, want processing only", got)
	}

	if _, err := e.slack.PressStop(e.ctx, "U1", "C1", thread); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "Stopped by <@U1>", 1)
	e.waitChecklist(thread, "idle")
	e.waitStatuses(thread, "processing", "active")
	e.stop()
}

// Slack refuses every method of the surfaces: each is tried once at most
// and never again after the first refusal of its surface; the thread is
// what it always was: the checklist, the review's four buttons with their
// words, and the run's words posted once.
func TestBinarySurfacesRefused(t *testing.T) {
	e := newBinEnv(t)
	for _, m := range surfaceMethods {
		e.slack.Refuse(m, "not_authorized")
	}
	e.start()
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:pending", "b:pending")), fakemodel.Text("Plan ready."))
	thread := e.slash("plan build the thing")
	review := e.waitMsg(thread, render.ActionApproveAuto, 1)
	for _, label := range []string{"Approve & auto-run", "Approve & confirm each step", "Keep planning", "Cancel"} {
		if !strings.Contains(strings.ReplaceAll(string(review.Blocks), `\u0026`, "&"), label) {
			t.Errorf("the review lacks %q", label)
		}
	}
	words, reply := slowWords("refusedword", 30)
	e.model.Enqueue(worked("a:completed", "b:in_progress"), worked("a:completed", "b:completed"), reply)
	e.click(review.TS, render.ActionApproveAuto)
	e.waitMsg(thread, "refusedwordx", 1)
	e.waitChecklist(thread, "2/2 tasks", "done")
	if n := len(e.msgs(thread, "h9_cl_title")); n != 1 {
		t.Errorf("%d checklists, want 1", n)
	}
	if n := len(e.msgs(thread, "refusedwordx")); n != 1 {
		t.Errorf("the run's words are in %d messages, want 1", n)
	}
	if m := e.msgs(thread, "refusedwordx"); len(m) == 1 && (m[0].Streamed || !strings.Contains(m[0].Text+string(m[0].Blocks), words[:40])) {
		t.Errorf("the words' message %+v is not today's post", m[0])
	}
	counts := e.slack.CallCounts()
	if counts[methodSetStatus] != 1 || counts["agents.sessions.rename"] != 0 {
		t.Errorf("%d setStatus and %d rename calls, want the one refused and none after", counts[methodSetStatus], counts["agents.sessions.rename"])
	}
	if counts[methodStartStream] != 1 || counts[methodAppend] != 0 || counts[methodStopStream] != 0 {
		t.Errorf("stream calls %d start, %d append, %d stop; want the one refused start and none after",
			counts[methodStartStream], counts[methodAppend], counts[methodStopStream])
	}
	if _, found := e.slack.AgentSession("C1", thread); found {
		t.Error("an agent session exists though Slack refused every call")
	}
	if n := strings.Count(e.logs.String(), "Slack refused an agent surface"); n != 2 {
		t.Errorf("h9 logged %d refused surfaces, want each of the two once", n)
	}
	e.stop()
}

// kill -9 while the run's text streams: the new process stops the stream
// the killed one left open before it posts anything else in the thread,
// deletes it, runs again and posts the words once.
func TestBinarySurfacesStreamLeftOpenAcrossKill(t *testing.T) {
	e := newBinEnv(t)
	e.start()
	_, long := slowWords("lostword", 2000)
	long.ChunkGap = 20 * time.Millisecond // minutes of text: h9 is killed mid-stream
	e.model.Enqueue(long)
	thread := e.slash("run say a lot")
	e.waitFor("the stream open with appended text", func() bool {
		return len(e.slack.OpenStreams("C1", thread)) == 1 && len(e.slack.Calls(methodAppend)) > 0
	})
	left := e.slack.OpenStreams("C1", thread)[0]
	e.kill()

	_, again := slowWords("againword", 20)
	e.model.Enqueue(again)
	restarted := time.Now()
	e.start()
	e.waitMsg(thread, "againwordx", 1)
	e.noStreamLeft(thread)

	var stoppedAt, firstPost time.Time
	for _, c := range e.slack.Calls("") {
		if !c.At.After(restarted) {
			continue
		}
		switch {
		case c.Method == methodStopStream && c.Params["ts"] == left && stoppedAt.IsZero():
			stoppedAt = c.At
		case firstPost.IsZero() && (c.Method == "chat.postMessage" && c.Params["thread_ts"] == thread ||
			c.Method == "chat.update" || c.Method == methodStartStream):
			firstPost = c.At
		}
	}
	if stoppedAt.IsZero() {
		t.Fatalf("the stream %s the killed process left open was never stopped", left)
	}
	if !firstPost.IsZero() && firstPost.Before(stoppedAt) {
		t.Errorf("the new process posted in the thread at %v, before it stopped the left stream at %v", firstPost, stoppedAt)
	}
	if n := len(e.msgs(thread, "lostwordx")); n != 0 {
		t.Errorf("the killed run's half-streamed text is still in %d messages", n)
	}
	if n := len(e.msgs(thread, "againwordx")); n != 1 {
		t.Errorf("the run's words are in %d messages, want 1", n)
	}
	e.stop()
}

// Two replicas on PostgreSQL: r1 takes the session and runs it; Slack
// sends what comes meanwhile (a Stop from someone else) to r2, which does
// not hold the session: every status and stream call comes from r1, the
// lease holder. Once the session rests and r2 gets the next reply, r2
// holds it, and the calls of its run are r2's.
func TestBinarySurfacesFleetOnlyHolderCalls(t *testing.T) {
	f := newFleetBin(t)
	f.start("r1")
	f.start("r2")
	f.slack.Prefer("r1")
	_, long := slowWords("fleetrun", 150)
	long.ChunkGap = 10 * time.Millisecond
	f.model.Enqueue(long)
	thread := f.slash("run fleet work")
	f.waitFor("the stream open", func() bool { return len(f.slack.OpenStreams("C1", thread)) == 1 })
	f.slack.Prefer("r2")
	if _, err := f.slack.PressStop(f.ctx, "U2", "C1", thread); err != nil {
		t.Fatal(err)
	}
	f.fakes.WaitEphemeral("C1", "U2", "can stop it, so it goes on")
	f.waitMsg(thread, "fleetrunx", 1)
	f.waitStatuses(thread, "processing", "active")
	f.noStreamLeft(thread)
	firstRun := time.Now()
	byReplica := func(since time.Time) map[string]int {
		out := map[string]int{}
		for _, c := range f.slack.Calls("") {
			if slices.Contains(surfaceMethods, c.Method) && c.At.After(since) {
				out[c.Replica]++
			}
		}
		return out
	}
	// At least the status at the run's start, the stream's start and its
	// stop (which carries the status after the run); appends depend on
	// how the words fell into coalescing intervals.
	if got := byReplica(time.Time{}); len(got) != 1 || got["r1"] < 3 {
		t.Errorf("surface calls by replica %v, want all from r1, the lease holder", got)
	}

	_, again := slowWords("fleetagain", 20)
	f.model.Enqueue(again)
	f.fakes.Reply("U1", thread, "once more")
	f.waitMsg(thread, "fleetagainx", 1)
	f.waitStatuses(thread, "processing", "active", "processing", "active")
	if got := byReplica(firstRun); len(got) != 1 || got["r2"] < 3 {
		t.Errorf("surface calls of the second run by replica %v, want all from r2, its lease holder", got)
	}
	a, _ := f.slack.AgentSession("C1", thread)
	for _, c := range a.History {
		if c.Replica != "r1" && c.Replica != "r2" {
			t.Errorf("status %s set through %q", c.Status, c.Replica)
		}
	}
	f.checkThread(thread, "fleetrunx", "fleetagainx")
}

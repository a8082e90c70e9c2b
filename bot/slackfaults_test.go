package bot

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// logBuffer collects JSON log lines from concurrent goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines decodes every JSON line logged so far.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func withJSONLog(l *logBuffer) func(*Config) {
	return func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// /h9 plan where h9 is not a member: chat.postMessage and chat.postEphemeral
// both answer not_in_channel, so h9 answers through the command's
// response_url and tells the user to invite it; no session starts.
func TestNotInChannelTellsUserToInvite(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, withJSONLog(&logs))
	e.slack.FailNext("chat.postMessage", "not_in_channel")
	e.slack.FailNext("chat.postEphemeral", "not_in_channel")
	e.slash(testUser, testChannel, "plan somewhere private")
	e.waitEphemeral(testChannel, testUser, "/invite @h9")
	if n := e.model.Calls(); n != 0 {
		t.Errorf("%d model calls for a session that could not start", n)
	}
	if len(e.slack.Calls("chat.postEphemeral")) != 0 {
		t.Error("h9 tried chat.postEphemeral although the response_url worked")
	}
	found := false
	for _, l := range logs.lines(t) {
		if l["msg"] == "slack call failed" && l["method"] == "chat.postMessage" {
			found = true
			if l["channel"] != testChannel || l["user"] != testUser || !strings.Contains(l["err"].(string), "not_in_channel") {
				t.Errorf("failure logged without its context: %v", l)
			}
		}
	}
	if !found {
		t.Error("the not_in_channel failure was not logged")
	}
}

// ok:false answers on a session's messages (msg_too_long, invalid_blocks,
// channel_not_found) are logged with the session, channel and thread, and
// the session goes on: the review still arrives and its buttons work.
func TestSlackErrorsAreLoggedWithSessionContext(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, withJSONLog(&logs))
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	e.slack.FailNext("chat.update", "msg_too_long")
	thread := e.startSession("plan", "slack says no")
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.slack.FailNext("chat.postMessage", "channel_not_found")
	e.model.Enqueue(planReplies("Plan again.", "a:pending", "b:pending")...)
	e.click(testUser, review.TS, render.ActionKeepPlanning)
	// A passing failure is retried: the checklist still reaches its final state.
	e.slack.FailNext("chat.update", "internal_error")
	e.reply(testUser, thread, "revise it")
	// The new review, whichever message the msg_too_long above hit (the
	// checklist's edit, or the first review's "chose Keep planning").
	first := review.TS
	e.waitFor("the revised review", func() bool {
		for _, m := range e.botMessages(thread, render.ActionApproveAuto) {
			if m.TS != first {
				review = m
				return true
			}
		}
		return false
	})
	e.waitChecklist(thread, "0/2 tasks", "awaiting review")
	e.slack.FailNext("chat.update", "invalid_blocks")
	e.model.Enqueue(
		worked("a:completed", "b:in_progress"),
		worked("a:completed", "b:completed"),
		fakemodel.Text("Done."))
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitChecklist(thread, "2/2 tasks", "done")
	failures := map[string]int{}
	for _, l := range logs.lines(t) {
		if l["msg"] != "slack call failed" {
			continue
		}
		err, _ := l["err"].(string)
		for _, code := range []string{"msg_too_long", "invalid_blocks", "channel_not_found", "internal_error"} {
			if strings.Contains(err, code) {
				failures[code]++
			}
		}
		if l["session"] != e.sessionID(thread) || l["channel"] != testChannel || l["thread"] != thread {
			t.Errorf("%v failure logged without session context: %v", l["method"], l)
		}
	}
	if failures["internal_error"] != 0 {
		t.Error("a retried internal_error was logged as a final failure")
	}
	if failures["msg_too_long"] == 0 || failures["invalid_blocks"] == 0 || failures["channel_not_found"] == 0 {
		t.Errorf("failures logged: %v", failures)
	}
}

func (e *env) sessionID(thread string) string { return newSessionID(testTeam, testChannel, thread) }

// Every log line that names a session also names its channel and thread.
func TestSessionLogLinesCarryChannelAndThread(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, withJSONLog(&logs))
	thread, review := e.planned("log context", "a:pending")
	e.model.Enqueue(fakemodelDone("a")...)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitChecklist(thread, "1/1 tasks", "done")
	e.stop()
	n := 0
	for _, l := range logs.lines(t) {
		if l["session"] == nil {
			continue
		}
		n++
		if l["channel"] != testChannel || l["thread"] != thread {
			t.Errorf("session line without channel/thread: %v", l)
		}
	}
	if n < 2 {
		t.Errorf("only %d session log lines", n)
	}
}

// fakemodelDone is an auto-run that completes the one todo id and ends.
func fakemodelDone(id string) []fakemodel.Reply {
	return []fakemodel.Reply{worked(id + ":completed"), fakemodel.Text("Done.")}
}

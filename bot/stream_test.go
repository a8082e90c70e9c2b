package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// streamedAnswer is a model answer long enough to come in many pieces,
// slowly, so that it spans several coalescing intervals.
func streamedAnswer(words string) fakemodel.Reply {
	r := fakemodel.Text(words)
	r.ChunkGap = 15 * time.Millisecond
	return r
}

// manyWords is n words of text, unique to this answer.
func manyWords(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(tag)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// streamCalls are the stream calls made, by method.
func streamCalls(e *env) (starts, appends, stops []fakeslack.Call) {
	return e.slack.Calls("chat.startStream"), e.slack.Calls("chat.appendStream"), e.slack.Calls("chat.stopStream")
}

// withText is every message in thread holding s, streams included.
func withText(e *env, thread, s string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range e.slack.Thread(testChannel, thread) {
		if strings.Contains(m.Text, s) || strings.Contains(string(m.Blocks), s) {
			out = append(out, m)
		}
	}
	return out
}

// A run's text streams into the thread as the model writes it, coalesced;
// when the run ends the streamed message goes and today's Done message is
// posted as before, so the words are in the thread once.
func TestStreamRunTextIntoThread(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	const interval = 200 * time.Millisecond
	e := newEnv(t, func(c *Config) { c.CoalesceInterval = interval })
	words := manyWords("streamword", 80) + " <!channel> & <@U2>"
	e.model.Enqueue(streamedAnswer(words))
	thread := e.startSession("run", "say a lot")
	done := e.waitMessage(thread, "Done", 1)
	e.waitFor("the stream stopped", func() bool { return len(e.slack.OpenStreams(testChannel, thread)) == 0 })

	starts, appends, stops := streamCalls(e)
	if len(starts) != 1 || len(stops) != 1 {
		t.Fatalf("%d startStream and %d stopStream calls, want 1 and 1", len(starts), len(stops))
	}
	streamed := starts[0].Params["markdown_text"]
	for _, c := range appends {
		streamed += c.Params["markdown_text"]
	}
	streamed += stops[0].Params["markdown_text"] // the last piece rides on the stop
	if streamed != render.Escape(words) {
		t.Errorf("streamed text %q, want the model's %q, escaped", streamed, words)
	}
	if done.Streamed || done.TS == stops[0].Params["ts"] {
		t.Errorf("the Done message (%s, streamed %v) is the stream %s, want today's post", done.TS, done.Streamed, stops[0].Params["ts"])
	}
	deleted := false
	for _, c := range e.slack.Calls("chat.delete") {
		deleted = deleted || c.Params["ts"] == stops[0].Params["ts"]
	}
	if !deleted {
		t.Error("the streamed message was not deleted once the words were posted")
	}
	if n := len(withText(e, thread, "streamwordx")); n != 1 {
		t.Errorf("the run's words are in %d messages, want 1", n)
	}
	// The stop carries the status the session is in once the run ended,
	// and no setStatus repeats it.
	if stops[0].Params["session_status"] != "active" {
		t.Errorf("stopStream carried session_status %q, want the session's once the run ended, active", stops[0].Params["session_status"])
	}
	e.waitStatuses(thread, "processing", "active")
	// At most one append per coalescing interval while the model wrote,
	// and some: the text came as it was written, not all at the end.
	if len(appends) == 0 {
		t.Error("no appendStream call: the text did not stream")
	}
	span := stops[0].At.Sub(starts[0].At)
	if most := int(span/interval) + 1; len(appends) > most {
		t.Errorf("%d appendStream calls in %v, more than one per %v (%d)", len(appends), span, interval, most)
	}
	e.waitStatuses(thread, "processing", "active")
}

// Slack refuses chat.startStream: the run's words are posted as they
// always were, once, and streaming is not tried again.
func TestStreamRefusedPostsAsToday(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := prepareEnv(t, t.TempDir(), func(c *Config) { c.CoalesceInterval = 50 * time.Millisecond })
	e.slack.Refuse("chat.startStream", "not_authorized")
	e.start()
	e.model.Enqueue(streamedAnswer(manyWords("firstrun", 20)))
	thread := e.startSession("run", "say a lot")
	done := e.waitMessage(thread, "Done", 1)
	if done.Streamed || !strings.Contains(blocksText(done), "firstrun") {
		t.Errorf("the Done message %+v is not today's", done)
	}
	if n := len(withText(e, thread, "firstrun")); n != 1 {
		t.Errorf("the run's words are in %d messages, want 1", n)
	}

	e.model.Enqueue(fakemodel.Text("second answer"))
	e.reply(testUser, thread, "and again")
	e.waitMessage(thread, "second answer", 1)
	if starts, appends, stops := streamCalls(e); len(starts) != 1 || len(appends) != 0 || len(stops) != 0 {
		t.Errorf("stream calls after Slack refused: %d starts, %d appends, %d stops", len(starts), len(appends), len(stops))
	}
}

// A stream a stopped process left open is stopped by the next holder when
// it takes the session up, before it posts, and its voided text deleted.
func TestStreamLeftOpenIsStoppedOnLoad(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("All done."))
	thread := e.startSession("run", "leave a stream")
	e.waitMessage(thread, "All done.", 1)
	e.waitFor("the session at rest", func() bool { return !e.record(thread).active() })
	e.stop()

	api := slack.New(e.slack.Options().BotToken, slack.OptionAPIURL(e.slack.APIURL()))
	_, left, err := api.StartStreamContext(e.ctx, testChannel, slack.MsgOptionTS(thread),
		slack.MsgOptionRecipientUserID(testUser), slack.MsgOptionRecipientTeamID(testTeam), slack.MsgOptionMarkdownText("half of an answ"))
	if err != nil {
		t.Fatal(err)
	}
	e.restartPending(thread, func(s *Session) { s.StreamTS = left })
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, thread, "status"); err != nil { // loads the session
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, testUser, "")
	e.waitFor("the left stream stopped and gone", func() bool {
		return len(e.slack.OpenStreams(testChannel, thread)) == 0 && len(withText(e, thread, "half of an answ")) == 0
	})
	if ts := e.record(thread).StreamTS; ts != "" {
		t.Errorf("the record still holds the stream %s", ts)
	}
	if stops := e.slack.Calls("chat.stopStream"); len(stops) == 0 || stops[len(stops)-1].Params["ts"] != left {
		t.Errorf("the left stream %s was not stopped by chat.stopStream", left)
	}
}

// A run of several answers streams into one message: one start, the
// answers appended as they come (a blank line between), one stop; the
// Done message then carries today's words, once.
func TestStreamOneStreamPerRun(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t, func(c *Config) { c.CoalesceInterval = 50 * time.Millisecond })
	first, second, last := manyWords("alpha", 20), manyWords("beta", 20), manyWords("omega", 20)
	answer := func(words, file string) fakemodel.Reply {
		r := streamedAnswer(words)
		r.Calls = []fakemodel.Call{fakemodel.C("write_file", `{"path":"`+file+`","content":"x"}`)}
		return r
	}
	e.model.Enqueue(answer(first, "one.txt"), answer(second, "two.txt"), streamedAnswer(last))
	thread := e.startSession("run", "think aloud")
	done := e.waitMessage(thread, "omegax", 1)
	e.waitFor("the stream stopped and deleted", func() bool {
		return len(e.slack.OpenStreams(testChannel, thread)) == 0 && len(withText(e, thread, "alphax")) == 0
	})

	starts, appends, stops := streamCalls(e)
	if len(starts) != 1 || len(stops) != 1 {
		t.Fatalf("%d startStream and %d stopStream calls for one run, want 1 and 1", len(starts), len(stops))
	}
	streamed := starts[0].Params["markdown_text"]
	for _, c := range appends {
		streamed += c.Params["markdown_text"]
	}
	streamed += stops[0].Params["markdown_text"] // the last piece rides on the stop
	if want := render.Escape(first + answerBreak + second + answerBreak + last); streamed != want {
		t.Errorf("streamed text %q, want the run's answers joined %q", streamed, want)
	}
	if done.Streamed || strings.Contains(blocksText(done), "alphax") {
		t.Errorf("the Done message %+v is not today's (the last answer's words)", done)
	}
	if deletes := e.slack.Calls("chat.delete"); len(deletes) != 1 || deletes[0].Params["ts"] != stops[0].Params["ts"] {
		t.Errorf("chat.delete calls %v, want one, of the stream %s", deletes, stops[0].Params["ts"])
	}
	if n := len(withText(e, thread, "omegax")); n != 1 {
		t.Errorf("the run's last words are in %d messages, want 1", n)
	}
}

// Slack's Stop while the run's text streams: the stream is stopped and
// its message deleted, the thread says who stopped the run, and nothing
// of the text shows twice or stays as a half-streamed message.
func TestStreamNativeStopDuringStream(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t, func(c *Config) { c.CoalesceInterval = 50 * time.Millisecond })
	replies := gate(t, e)
	thread := e.startSession("run", "a long answer")
	slow := streamedAnswer(manyWords("halfway", 400))
	slow.ChunkGap = 20 * time.Millisecond
	go func() {
		select {
		case replies <- slow:
		case <-e.ctx.Done():
		}
	}()
	e.waitFor("the stream open with some text", func() bool {
		return len(e.slack.OpenStreams(testChannel, thread)) == 1 && len(e.slack.Calls("chat.appendStream")) > 0
	})
	if _, err := e.slack.PressStop(e.ctx, testUser, testChannel, thread); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, "Stopped by <@"+testUser+">", 1)
	e.waitFor("the stream stopped and deleted", func() bool {
		return len(e.slack.OpenStreams(testChannel, thread)) == 0 && len(withText(e, thread, "halfwayx")) == 0
	})
	starts, _, stops := streamCalls(e)
	if len(starts) != 1 || len(stops) != 1 {
		t.Errorf("%d startStream and %d stopStream calls, want 1 and 1", len(starts), len(stops))
	}
	e.waitStatuses(thread, "processing", "active")
	if ts := e.record(thread).StreamTS; ts != "" {
		t.Errorf("the record still names the stream %s", ts)
	}
}

// The model's stream breaks mid-answer and the request is tried again:
// the answer's text is retracted and comes again. The same text extends
// what the stream holds, so the stream goes on (one start); different
// text voids it (stopped, deleted, and a fresh one starts).
func TestStreamRetractedText(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := prepareEnv(t, t.TempDir(), func(c *Config) { c.CoalesceInterval = 20 * time.Millisecond })
	e.modelTries = 2
	e.start()
	cut := func(words string) fakemodel.Reply {
		r := streamedAnswer(words)
		r.CutAfter = 4
		return r
	}
	same := manyWords("samewords", 80)
	e.model.Enqueue(cut(same), streamedAnswer(same))
	one := e.startSession("run", "try twice")
	e.waitMessage(one, "samewordsx", 1)
	e.waitFor("the stream stopped", func() bool { return len(e.slack.OpenStreams(testChannel, one)) == 0 })
	starts, appends, stops := streamCalls(e)
	if len(starts) != 1 || len(stops) != 1 {
		t.Fatalf("%d starts and %d stops for a retried answer whose text came again, want 1 and 1", len(starts), len(stops))
	}
	streamed := starts[0].Params["markdown_text"]
	for _, c := range appends {
		streamed += c.Params["markdown_text"]
	}
	if streamed += stops[0].Params["markdown_text"]; streamed != render.Escape(same) {
		t.Errorf("streamed %q, want the answer once %q", streamed, same)
	}

	before := len(starts)
	e.model.Enqueue(cut(manyWords("firsttry", 80)), streamedAnswer(manyWords("secondtry", 40)))
	e.reply(testUser, one, "once more")
	e.waitMessage(one, "secondtryx", 1)
	e.waitFor("the streams stopped and deleted", func() bool {
		return len(e.slack.OpenStreams(testChannel, one)) == 0 && len(withText(e, one, "firsttryx")) == 0
	})
	if starts, _, _ := streamCalls(e); len(starts)-before != 2 {
		t.Errorf("%d starts for a retried answer whose text changed, want 2 (the first voided)", len(starts)-before)
	}
	if n := len(withText(e, one, "secondtryx")); n != 1 {
		t.Errorf("the words are in %d messages, want 1", n)
	}
}

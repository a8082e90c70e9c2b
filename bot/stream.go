package bot

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
)

// A run's text streams into its thread as the model writes it
// (ARCHITECTURE.md, "Slack's agent surfaces"). The run's goroutine only
// hands the text to the run's streamer (feed); the streamer's goroutine,
// owned by the actor and waited for when the run ends, starts the stream
// at the run's first text and appends at most once per
// H9_COALESCE_INTERVAL. One stream carries the whole run: the model's next
// answer is appended after a blank line. Only text that no longer stands
// (a retraction, then different text) voids the stream: it is stopped and
// deleted and a fresh one starts. At the run's
// end the actor stops the stream and records its ts (Session.StreamTS);
// the post that carries the run's words (PendingPost.Words) then deletes
// that message and goes out exactly as today's, so nothing shows twice.
// A stream Slack refused or that failed is deleted, and the words are
// posted as they always were.

// maxStreamText is the most a stream shows (characters, escaped): Slack's
// limit on one markdown_text, well under a message's. Past it the stream
// waits for the run's end, when the post of its words brings the rest.
const maxStreamText = 12000

// answerBreak separates the run's answers in its stream.
const answerBreak = "\n\n"

// runStream is one run's streamer.
type runStream struct {
	a                            *actor
	check                        *checklist      // the stream comes after its first post
	ctx                          context.Context // the actor's, under the lease
	channel, thread, owner, team string
	interval                     time.Duration
	wake                         chan struct{} // cap 1: there is text, or the run ended
	stop                         chan struct{} // closed when the run ended: no more waiting
	exited                       chan struct{}

	mu     sync.Mutex
	answer int             // the answer being heard
	before strings.Builder // the run's earlier answers' text, joined by answerBreak
	text   strings.Builder // the current answer's text since its last retraction
	ended  bool

	// The goroutine's own, read by end once it exited.
	ts     string // the open stream, "" before the first text
	sent   string // the run's text the stream holds, unescaped
	shown  int    // characters the stream holds, escaped
	full   bool   // the stream reached maxStreamText
	failed bool   // a call failed: the words are posted as always
}

// startStream starts the run's streamer, unless streaming is off.
func (a *actor) startStream() *runStream {
	// Slack streams in a channel only to a recipient (recipient_user_id and
	// recipient_team_id): a session with no owner (an automation's without
	// one) has none, so its words are posted when the run ends, as they
	// always were, and the surface stays on for the others.
	if a.rec == nil || a.rec.Owner == "" || !a.b.api.SurfaceOn(slackapi.SurfaceStream) {
		return nil
	}
	st := &runStream{a: a, check: a.check, ctx: a.ctx, channel: a.rec.Channel, thread: a.rec.ThreadTS, owner: a.rec.Owner,
		team: a.rec.Team, interval: a.b.cfg.CoalesceInterval, wake: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{})}
	if !a.b.tasks.spawn(st.loop) {
		return nil
	}
	return st
}

// feed takes a text event of the run; it runs on the run's goroutine.
func (st *runStream) feed(ev agent.Event) {
	st.mu.Lock()
	switch {
	case ev.Kind == agent.EventTextRetracted && ev.Answer == st.answer:
		st.text.Reset()
	case ev.Kind == agent.EventTextDelta:
		if ev.Answer != st.answer {
			st.answer = ev.Answer
			st.closeAnswer()
		}
		st.text.WriteString(ev.Text)
	}
	st.mu.Unlock()
	st.signal()
}

// closeAnswer moves the current answer's text after the earlier ones';
// under mu.
func (st *runStream) closeAnswer() {
	if st.text.Len() == 0 {
		return
	}
	if st.before.Len() > 0 {
		st.before.WriteString(answerBreak)
	}
	st.before.WriteString(st.text.String())
	st.text.Reset()
}

// runText is the run's text so far: its answers', joined; under mu.
func (st *runStream) runText() string {
	switch {
	case st.text.Len() == 0:
		return st.before.String()
	case st.before.Len() == 0:
		return st.text.String()
	}
	return st.before.String() + answerBreak + st.text.String()
}

func (st *runStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// loop sends the text as it comes, one call per interval at most.
func (st *runStream) loop() {
	defer close(st.exited)
	for {
		select {
		case <-st.wake:
		case <-st.ctx.Done():
			st.failed = true
			return
		}
		st.mu.Lock()
		text, ended := st.runText(), st.ended
		st.mu.Unlock()
		if ended { // the rest goes with chat.stopStream (end)
			return
		}
		if !st.failed {
			st.send(text)
		}
		t := time.NewTimer(st.interval)
		select {
		case <-t.C:
		case <-st.stop:
		case <-st.ctx.Done():
		}
		t.Stop()
	}
}

// send brings the stream up to text, the run's text so far. Text that
// falls short of what the stream holds (a retraction) waits for more;
// text that departs from it voids the stream. The model's text is escaped
// as every post of it is: it never mentions anyone or @channel (escaping
// piece by piece escapes the whole).
func (st *runStream) send(text string) {
	api, log := st.a.b.api, st.a.log
	if st.ts != "" && !strings.HasPrefix(text, st.sent) {
		if strings.HasPrefix(st.sent, text) {
			return
		}
		st.void()
		if st.failed {
			return
		}
	}
	piece, n := st.rest(text)
	if piece == "" {
		return
	}
	switch {
	case st.ts == "":
		if st.check != nil {
			st.check.waitFirstPost() // the checklist stays the thread's first reply; bounded by its call's deadline
		}
		ts, err := api.StartStream(st.ctx, log, st.channel, st.thread, st.owner, st.team, piece)
		if err != nil {
			st.failed = true
			return
		}
		st.ts, st.sent, st.shown = ts, text, n
		st.a.push(msgStreamStarted{stream: st, ts: ts})
	default:
		if err := api.AppendStream(st.ctx, log, st.channel, st.ts, piece); err != nil {
			st.failed = true
			return
		}
		st.sent, st.shown = text, st.shown+n
	}
}

// rest is the piece (escaped, and its length in characters) that brings
// the stream up to text, which extends what it holds; "" when there is
// none or it would not fit (then the stream is full).
func (st *runStream) rest(text string) (string, int) {
	if len(text) <= len(st.sent) || st.full || !strings.HasPrefix(text, st.sent) {
		return "", 0
	}
	piece := render.Escape(text[len(st.sent):])
	n := utf8.RuneCountInString(piece)
	if st.shown+n > maxStreamText {
		st.full = true
		return "", 0
	}
	return piece, n
}

// void stops and deletes the open stream, whose text no longer stands.
func (st *runStream) void() {
	api, log := st.a.b.api, st.a.log
	// The run goes on: the session stays processing (a stop without
	// session_status would make it active).
	err := api.StopStream(st.ctx, log, st.channel, st.ts, slack.AgentSessionStatusProcessing, "")
	if derr := api.Delete(st.ctx, log, st.channel, st.ts); err == nil {
		err = derr
	}
	if err != nil {
		log.Warn("voiding the run's stream", "ts", st.ts, "err", err)
	}
	st.ts, st.sent, st.shown, st.full = "", "", 0, false
	if err != nil {
		st.failed = true
	}
}

// end waits for the streamer and stops the stream with the session's
// status and the rest of the text (so the run's last words cost no
// appendStream of their own); it returns the stream's ts when the stream
// holds the run's text, "" when there is none or it failed (then the
// stream is deleted). Text the streamer first hears once the run
// returned starts no stream: its words are posted at once. On the actor.
func (st *runStream) end(status string) string {
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
	st.signal()
	close(st.stop)
	<-st.exited
	if st.ts == "" {
		return ""
	}
	st.mu.Lock()
	text := st.runText()
	st.mu.Unlock()
	piece, _ := st.rest(text)
	if !st.failed && st.a.b.api.StopStream(st.ctx, st.a.log, st.channel, st.ts, status, piece) == nil {
		return st.ts
	}
	st.deleteLeft(st.ts)
	return ""
}

// deleteLeft deletes a stream message that will not carry the run's words.
func (st *runStream) deleteLeft(ts string) {
	st.a.deleteStream(st.channel, ts, "deleting a stream that failed")
}

// deleteStream deletes a streamed message; a failure is logged, not
// returned: the words go out as today's post whatever became of it, and a
// stream left in the thread shows text the post repeats, never loses.
func (a *actor) deleteStream(channel, ts, what string) {
	if err := a.b.api.Delete(a.ctx, a.log, channel, ts); err != nil {
		a.log.Warn(what, "ts", ts, "err", err)
	}
}

// msgStreamStarted: the run's stream started at ts; it is recorded at
// once, so that a later holder finds a stream left open.
type msgStreamStarted struct {
	stream *runStream
	ts     string
}

func (m msgStreamStarted) handle(a *actor) {
	if a.rec == nil || a.lost || a.stream != m.stream || a.rec.StreamTS == m.ts {
		return
	}
	a.rec.StreamTS = m.ts
	a.save()
}

// endStream ends the run's stream when the run returned: its ts stays
// recorded for the post of the run's words (postPending), or it is none.
// The stop carries status, the session's once the run's outcome is
// applied: that change of status is told by the stop, and recorded as
// told, so syncAgentStatus makes no call of its own for it (one call per
// change; ARCHITECTURE.md, "Slack's agent surfaces").
func (a *actor) endStream(status string) {
	st := a.stream
	a.stream = nil
	if st == nil {
		return
	}
	ts := st.end(status)
	if a.lost {
		return
	}
	told := ts != "" && a.rec.AgentStatus != status
	if told {
		a.rec.AgentStatus = status
	}
	if a.rec.StreamTS != ts || told {
		a.rec.StreamTS = ts
		a.save()
	}
}

// statusAfter is the agent status the session is in once ev is applied
// (the machine is pure: nothing is carried out).
func (a *actor) statusAfter(ev event) string {
	next, _ := transition(*a.rec, ev)
	return next.agentStatus()
}

// settleStream runs after the run's outcome was applied: a stream with no
// post of words pending is deleted now (a pending one deletes it as it
// goes out), so the thread shows what it always did.
func (a *actor) settleStream() {
	if a.rec == nil || a.rec.StreamTS == "" || a.wordsPending() {
		return
	}
	ts := a.rec.StreamTS
	a.rec.StreamTS = ""
	a.save()
	a.deleteStream(a.rec.Channel, ts, "deleting a run's stream that carries no words")
}

// stopLeftStream stops a stream a previous holder (or this process before
// a restart) left open, before anything else is posted in the thread: on
// load, under the lease just taken. Its text is deleted, now or as the
// pending post of the run's words goes out.
func (a *actor) stopLeftStream() {
	if a.rec == nil || a.rec.StreamTS == "" || a.run != nil || !a.b.api.SurfaceOn(slackapi.SurfaceStream) {
		return
	}
	err := a.b.api.StopStream(a.ctx, a.log, a.rec.Channel, a.rec.StreamTS, a.rec.AgentStatus, "")
	if err != nil && slackapi.ErrorCode(err) != "message_not_in_streaming_state" {
		a.log.Warn("stopping a stream a previous holder left open", "ts", a.rec.StreamTS, "err", err)
	}
	a.settleStream()
}

// withKey is a pending post's message as it is sent, key included.
func withKey(p PendingPost) render.Message { return render.WithKey(p.message(), p.Key) }

// wordsPending reports whether a post of a run's words is still to go out.
func (a *actor) wordsPending() bool {
	return slices.ContainsFunc(a.rec.Posts, func(p PendingPost) bool { return p.Words })
}

// retireStreamFor deletes the run's stream before the post p of the run's
// words goes out as it always has (a chat.postMessage with today's words,
// header and spend): the thread shows the words once, in the message every
// reader found before streaming existed.
func (a *actor) retireStreamFor(p PendingPost) {
	ts := a.rec.StreamTS
	if !p.Words || ts == "" {
		return
	}
	a.rec.StreamTS = ""
	a.deleteStream(a.rec.Channel, ts, "deleting the run's stream before its words are posted")
}

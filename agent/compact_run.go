package agent

import (
	"context"
	"errors"

	"github.com/h9-app/h9/agent/openai"
)

// overflowToolShare: after an overflow, each kept tool output is cut to
// 1/overflowToolShare of the context window (in estimated bytes), so that
// one large command output cannot fill the window again.
const (
	overflowToolShare    = 8
	minOverflowToolBytes = 1000
)

// maybeCompact summarises old messages when the prompt about to be sent
// passes the threshold: the size the endpoint counted for the last one,
// plus an estimate of what was added since (a large tool output). Failures
// keep the history and are reported, once per run.
func (r *run) maybeCompact(ctx context.Context) {
	c := r.compactor()
	if r.compactFailed || !c.due(r.promptSize()) {
		return
	}
	r.compactWith(ctx, c, 0, "to stay within the context window")
}

// promptSize is the expected size of the next prompt; 0 when unknown
// (just after a compaction, which is not repeated at once).
func (r *run) promptSize() int {
	if r.state.LastPrompt == 0 {
		return 0
	}
	return r.state.LastPrompt + estimateTokens(r.msgs[min(r.askedLen, len(r.msgs)):])
}

// shrinkAfterOverflow handles an endpoint's "the prompt does not fit": it
// learns the window the endpoint stated (or guesses it from the prompt
// that failed), summarises the older messages and cuts long tool outputs
// in the kept ones. It reports whether the history changed, so the
// request is worth sending again.
func (r *run) shrinkAfterOverflow(ctx context.Context, err error) bool {
	window, overflowed := openai.Overflowed(err)
	if !overflowed {
		return false
	}
	if window <= 0 {
		window = estimatePromptTokens(r.req) * 3 / 4
	}
	r.e.learnWindow(window)
	c := r.compactor()
	toolCap := max(c.window*estimateCharsPerToken/overflowToolShare, minOverflowToolBytes)
	return r.compactWith(ctx, c, toolCap, "because the conversation did not fit the model's context window")
}

// compactWith replaces the stored history with its compacted form and
// reports whether it did; why ends the event's note.
func (r *run) compactWith(ctx context.Context, c compactor, toolCap int, why string) bool {
	res, used, err := c.compact(ctx, r.msgs[1:], r.todos, toolCap)
	r.count(used)
	if errors.Is(err, errNothingToCompact) {
		return false
	}
	if err == nil {
		st := r.state
		st.LastPrompt = 0 // unknown until the next call; avoids compacting again at once
		if err = r.replaceHistory(res.msgs, st); err == nil {
			r.msgs = append(r.msgs[:1], res.msgs...)
			r.saved, r.state, r.askedLen = len(r.msgs), st, len(r.msgs)
			r.emit(Event{Kind: EventCompacted, Text: res.note(why)})
			return true
		}
	}
	r.compactFailed = true
	r.e.log.Warn("compaction failed", "session", r.id, "err", err)
	r.emit(Event{Kind: EventCompactFailed, Text: "Could not summarise the conversation; continuing with the full history.", Err: err})
	return false
}

func (r *run) compactor() compactor {
	c := r.e.compactor
	c.user, c.window = r.id, r.e.contextWindow()
	return c
}

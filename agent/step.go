package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/h9-app/h9/planning"
)

// ask sends the conversation to the model and returns its checked answer
// (see openai.WithRetries). When the endpoint says the prompt does not fit, the
// history is shrunk once and the request sent again.
//
// The answer's text is given out as the model writes it (EventTextDelta);
// text of a request that failed is retracted.
func (r *run) ask(ctx context.Context) (Answer, error) {
	r.nextAnswer()
	ans, err := r.askOnce(ctx)
	if err != nil && ctx.Err() == nil && r.dropRefusedImages(err) {
		ans, err = r.askOnce(ctx)
	}
	if err != nil && ctx.Err() == nil && r.shrinkAfterOverflow(ctx, err) {
		ans, err = r.askOnce(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, fmt.Errorf("%w: %v", ErrCancelled, context.Cause(ctx))
		}
		return Answer{}, fmt.Errorf("session %s: %w", r.id, err)
	}
	return ans, nil
}

func (r *run) askOnce(ctx context.Context) (Answer, error) {
	r.req.Messages = r.msgs
	r.askedLen = len(r.msgs)
	ans, err := r.e.model.Complete(ctx, r.req)
	if err != nil {
		r.onRetract() // a model without WithRetries' retraction
		r.count(ans.Discarded)
		return Answer{}, err
	}
	u := usageOrEstimate(ans.Usage, r.req, ans.Message)
	r.count(u.Plus(ans.Discarded))
	r.state.LastPrompt = u.PromptTokens
	return ans, nil
}

// count adds tokens to the run's and the session's totals and tells the
// caller the new figures.
func (r *run) count(u Usage) {
	r.runUsage = r.runUsage.Plus(u)
	r.state.Total = r.state.Total.Plus(u)
	r.e.metrics.Tokens(u.PromptTokens, u.CompletionTokens, u.Estimated)
	if u != (Usage{}) {
		r.emit(Event{Kind: EventUsage, Usage: r.runUsage, Total: r.state.Total})
	}
}

// finalText is what a run that ends with ans says: the text, marked when
// it is a refusal; a text cut before its end is an ErrAnswerCut too.
func finalText(ans Answer) (string, error) {
	text := ans.Message.Content
	switch {
	case refused(&ans):
		return "The model refused: " + text, nil
	case cut(&ans):
		return text, &cutError{finish: ans.FinishReason}
	}
	return text, nil
}

// runTools executes the calls in order and answers each with its id. Once
// the context is cancelled the remaining calls are answered "not run", so
// the stored history stays valid for the next run. sent is
// storableArguments' answer for calls.
func (r *run) runTools(ctx context.Context, calls []ToolCall, sent []sentArguments) []Message {
	out := make([]Message, 0, len(calls))
	var images []toolImage
	for i, c := range calls {
		res := fail(errNotRun)
		if ctx.Err() == nil {
			r.flushTodos() // an earlier todo_write of this step shows before this call runs
			var s sentArguments
			if sent != nil {
				s = sent[i]
			}
			res = r.runTool(ctx, c, s)
		}
		if res.Output == "" {
			res.Output = "(no output)" // endpoints reject a tool message without content
		}
		out = append(out, toolMessage(c.ID, res.Output))
		for _, img := range res.Images {
			images = append(images, toolImage{tool: c.Function.Name, data: img})
		}
	}
	if m, ok := r.toolImagesMessage(images); ok {
		out = append(out, m)
	}
	return out
}

var errNotRun = errors.New("not run: the run was cancelled")

// cutArgumentsHint follows the error of a call whose arguments the output
// limit cut off: sending the same again would be cut again.
const cutArgumentsHint = "Your answer reached its output limit (finish_reason: length) while writing this call's arguments, so they were cut off. Send a smaller call: for a large file, write a first part, then add the rest with edit_file."

func (r *run) runTool(ctx context.Context, c ToolCall, sent sentArguments) toolResult {
	name, args := c.Function.Name, c.Function.Arguments
	if sent.raw != "" {
		args = sent.raw
	}
	summary := r.tools.summary(name, args)
	r.emit(Event{Kind: EventToolStarted, Tool: name, Summary: summary})
	res := r.tools.call(ctx, r.env, name, args)
	if sent.cut && res.IsError {
		res.Output += "\n" + cutArgumentsHint
	}
	r.emit(Event{Kind: EventToolFinished, Tool: name, IsError: res.IsError, Output: short(res.Output)})
	if name != todoWriteName {
		r.recordWork(name, summary, res)
	}
	if res.TodosChanged {
		r.checkpoint(ctx, res)
		// Stored with the step's commit; the event follows the commit.
		r.todosPending, r.todosStored = true, false
		r.todosSnap = res.Todos
		if r.todosSnap == nil {
			r.todosSnap = []planning.TodoItem{}
		}
		r.todosEvidence = r.state.Work.Evidence()
	}
	return res
}

// trackWork is false only in the benchmarks' baseline: runs without the
// work log (no work rule, no evidence), as before it existed.
var trackWork = true

// evidenceTarget bounds what a tool call's evidence says it acted on:
// a checklist line shows a few words of it, and the state keeps it.
const evidenceTarget = 80

// recordWork gives a call that ran — it succeeded, or a command exited —
// to the work rule's log. A call that never ran (an unknown tool, bad
// arguments, a rejected step) is not work and shows in no evidence.
func (r *run) recordWork(name, summary string, res toolResult) {
	if _, known := r.tools.byName[name]; !known || (res.IsError && res.Exit == nil) || r.env.work == nil {
		return
	}
	run := planning.ToolRun{Tool: name, Target: shortTo(summary, evidenceTarget), Failed: res.IsError, Exit: res.Exit}
	r.state.Work.Record(run)
}

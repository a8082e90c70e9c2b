package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/h9-app/h9/planning"
	openai "github.com/sashabaranov/go-openai"
)

// ask sends the conversation to the model and returns its reply, with
// tool-call ids filled in when an endpoint leaves them empty.
func (r *run) ask(ctx context.Context) (openai.ChatCompletionMessage, error) {
	r.req.Messages = r.msgs
	resp, err := r.e.model.CreateChatCompletion(ctx, r.req)
	if err != nil {
		if ctx.Err() != nil {
			return openai.ChatCompletionMessage{}, fmt.Errorf("%w: %v", ErrCancelled, context.Cause(ctx))
		}
		return openai.ChatCompletionMessage{}, fmt.Errorf("session %s: %w", r.id, err)
	}
	u := usageOf(resp.Usage)
	r.count(u)
	r.usage.LastPrompt = u.PromptTokens
	if u.PromptTokens == 0 {
		// The endpoint reported no usage (some local servers and proxies
		// omit it): without an estimate the history would never compact.
		r.usage.LastPrompt = estimatePromptTokens(r.req)
	}
	msg := resp.Choices[0].Message
	msg.Role, msg.MultiContent, msg.FunctionCall = openai.ChatMessageRoleAssistant, nil, nil
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", len(r.msgs), i)
		}
		tc.Type, tc.Index = openai.ToolTypeFunction, nil
	}
	return msg, nil
}

// count adds tokens to the run's and the session's totals.
func (r *run) count(u Usage) {
	r.runUsage.add(u)
	r.usage.Total.add(u)
}

// runTools executes the calls in order and answers each with its id. Once
// the context is cancelled the remaining calls are answered "not run", so
// the stored history stays valid for the next run.
func (r *run) runTools(ctx context.Context, calls []openai.ToolCall) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(calls))
	for _, c := range calls {
		res := fail(errNotRun)
		if ctx.Err() == nil {
			r.flushTodos() // an earlier todo_write of this step shows before this call runs
			res = r.runTool(ctx, c)
		}
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: res.Output, ToolCallID: c.ID})
	}
	return out
}

var errNotRun = errors.New("not run: the run was cancelled")

func (r *run) runTool(ctx context.Context, c openai.ToolCall) toolResult {
	name, args := c.Function.Name, c.Function.Arguments
	r.emit(Event{Kind: EventToolStarted, Tool: name, Summary: r.tools.summary(name, args)})
	res := r.tools.call(ctx, r.env, name, args)
	r.emit(Event{Kind: EventToolFinished, Tool: name, IsError: res.IsError, Output: short(res.Output)})
	if res.TodosChanged {
		// Stored with the step's commit; the event follows the commit.
		r.todosPending, r.todosStored = true, false
		r.todosSnap = res.Todos
		if r.todosSnap == nil {
			r.todosSnap = []planning.TodoItem{}
		}
	}
	return res
}

// maybeCompact summarises old messages when the last prompt passed the
// threshold. Failures keep the history and are reported, once per run.
func (r *run) maybeCompact(ctx context.Context) {
	if r.compactFailed || !r.e.compactor.due(r.usage.LastPrompt) {
		return
	}
	c := r.e.compactor
	c.user = r.id
	compacted, used, err := c.compact(ctx, r.msgs[1:], r.todos)
	r.count(used)
	if errors.Is(err, errNothingToCompact) {
		return
	}
	if err == nil {
		u := r.usage
		u.LastPrompt = 0 // unknown until the next call; avoids compacting again at once
		if err = r.replaceHistory(compacted, u); err == nil {
			dropped := len(r.msgs) - len(compacted) // the summarised ones: msgs[1:] minus those kept
			r.msgs = append(r.msgs[:1], compacted...)
			r.saved, r.usage = len(r.msgs), u
			r.emit(Event{Kind: EventCompacted, Text: fmt.Sprintf("Summarised %d older messages to stay within the context window.", dropped)})
			return
		}
	}
	r.compactFailed = true
	r.e.log.Warn("compaction failed", "session", r.id, "err", err)
	r.emit(Event{Kind: EventCompactFailed, Text: "Could not summarise the conversation; continuing with the full history.", Err: err})
}

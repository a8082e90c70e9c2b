package bot

import (
	"fmt"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// BenchmarkSurfacesCalls: Slack Web API calls per session of a planned,
// approved 10-step run, with Slack's agent surfaces on and with every
// surface method refused (h9 as before), side by side. Budget: at most 5
// status calls per session whatever the number of steps; the checklist's
// own edits unchanged.
func BenchmarkSurfacesCalls(b *testing.B) {
	testenv.Full(b, "a real bot against the fakes")
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("surfaces=%t", on), func(b *testing.B) {
			e := newBenchEnv(b, "", 0, nil, nil)
			if !on {
				for _, m := range []string{"agents.sessions.setStatus", "agents.sessions.rename", "chat.startStream", "chat.appendStream", "chat.stopStream"} {
					e.slack.Refuse(m, "not_authorized")
				}
			}
			const steps = 10
			before := e.slack.CallCounts()
			sessions := 0
			for b.Loop() {
				tenStepSession(b, e, steps, on)
				sessions++
			}
			after := e.slack.CallCounts()
			per := func(method string) float64 { return float64(after[method]-before[method]) / float64(sessions) }
			total := 0
			for m, n := range after {
				total += n - before[m]
			}
			b.ReportMetric(per("agents.sessions.setStatus"), "status-calls/session")
			b.ReportMetric(per("chat.update"), "chat.update/session")
			b.ReportMetric(per("chat.postMessage"), "posts/session")
			b.ReportMetric(float64(total)/float64(sessions), "slack-calls/session")
		})
	}
}

// tenStepSession plans steps todos, approves auto-run and waits for done
// (and, with the surfaces on, for Slack to show the session active).
func tenStepSession(b *testing.B, e *benchEnv, steps int, on bool) {
	b.Helper()
	pairs := make([]string, steps)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("t%d:pending", i)
	}
	e.model.Enqueue(planReplies("Plan.", pairs...)...)
	thread := e.fakes.StartThread(testUser, "plan a ten-step task")
	review := e.fakes.WaitMessage(thread, render.ActionApproveAuto, 1)
	for i := range pairs {
		done := make([]string, steps)
		for j := range done {
			done[j] = fmt.Sprintf("t%d:pending", j)
			if j <= i {
				done[j] = fmt.Sprintf("t%d:completed", j)
			}
		}
		e.model.Enqueue(worked(done...))
	}
	e.model.Enqueue(fakemodel.Text("All ten done."))
	e.fakes.Click(testUser, review.TS, render.ActionApproveAuto)
	e.fakes.WaitChecklist(thread, fmt.Sprintf("%d/%d tasks", steps, steps), "done")
	if on {
		e.waitFor(b, "the session active", func() bool {
			a, _ := e.slack.AgentSession(testChannel, thread)
			return a.Status == "active"
		})
	}
}

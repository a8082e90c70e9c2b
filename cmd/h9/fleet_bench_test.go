package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
)

// BenchmarkTakeoverAfterKill: kill -9 of the h9 process running a session
// mid-run; the time from the kill until the surviving replica's restart
// notice reaches Slack (it has taken the session over and resumes it).
// Each round starts a new victim next to the survivor. Budget: within
// 2 × H9_LEASE_TTL (fleetTTL here); the bound by design is about 1.33 ×
// TTL: the victim's lease lapses at most a TTL after its last renewal, and
// survivors look for orphans every third of a TTL.
func BenchmarkTakeoverAfterKill(b *testing.B) {
	f := newFleetBin(b)
	f.start("survivor")
	var takeovers []time.Duration
	for i := 0; b.Loop(); i++ {
		victim := fmt.Sprint("victim", i)
		f.start(victim)
		f.slack.Prefer(victim)
		calls := f.model.Calls()
		f.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:in_progress")), blocked())
		thread := f.slash(fmt.Sprintf("run takeover %d", i))
		f.waitCalls(calls + 2)
		f.model.Enqueue(worked("a:completed"), fakemodel.Text(fmt.Sprintf("Resumed %d.", i)))
		f.slack.Prefer("survivor")
		killed := time.Now()
		f.signal(victim, syscall.SIGKILL)
		f.waitMsg(thread, restartedWords, 1)
		takeovers = append(takeovers, f.postedAt(thread, restartedWords).Sub(killed))
		f.waitMsg(thread, fmt.Sprintf("Resumed %d.", i), 1)
	}
	slices.Sort(takeovers)
	p50, worst := takeovers[len(takeovers)/2], takeovers[len(takeovers)-1]
	b.ReportMetric(p50.Seconds(), "takeover-p50-s")
	b.ReportMetric(worst.Seconds(), "takeover-max-s")
	b.ReportMetric(worst.Seconds()/fleetTTL.Seconds(), "max/TTL")
}

// postedAt is when the fake received the bot's post in thread carrying text.
func (f *fleetBin) postedAt(thread, text string) time.Time {
	for _, c := range f.slack.Calls("chat.postMessage") {
		if c.Params["thread_ts"] == thread && strings.Contains(c.Params["text"]+c.Params["blocks"], text) {
			return c.At
		}
	}
	f.t.Fatalf("no post with %q in %s", text, thread)
	return time.Time{}
}

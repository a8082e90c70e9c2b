package bot

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// BenchmarkAttachmentToModelRequest (issue 22): a thread reply sharing a
// 20 MiB file, from the reply's event to the model request that names the
// file (downloaded with the bot token into the workspace), side by side
// with the same reply without a file. Budget: under 1 s on loopback, and
// h9's extra memory under 2× the file's size: alloc-MiB/op is everything
// the process allocated for the reply (the fakes serve the file from one
// buffer made before the timer and not copied).
func BenchmarkAttachmentToModelRequest(b *testing.B) {
	const size = 20 << 20
	for _, c := range []struct {
		name  string
		files []fakeslack.UserFile
	}{
		{"reply without a file", nil},
		{"reply with a 20MiB file", []fakeslack.UserFile{{Name: "trace.log", Mimetype: "text/plain", Content: []byte(strings.Repeat("x", size))}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			arrived := make(chan time.Time, 1)
			var calls atomic.Int64
			e := newBenchEnv(b, "", 0, func(openai.ChatCompletionRequest) fakemodel.Reply {
				if calls.Add(1) > 1 {
					arrived <- time.Now()
				}
				return fakemodel.Text("answer-ok")
			}, func(cfg *Config) { cfg.AttachmentMax = size })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			thread := benchSession(b, e, ctx)
			var total time.Duration
			var allocs uint64
			b.ResetTimer()
			for i := range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				if _, err := e.slack.PostUserFiles(ctx, "U1", "C1", thread, "look at this", c.files); err != nil {
					b.Fatal(err)
				}
				at := <-arrived
				total += at.Sub(start)
				runtime.ReadMemStats(&after)
				allocs += after.TotalAlloc - before.TotalAlloc
				waitAnswers(b, e, ctx, thread, i+2)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/reply")
			b.ReportMetric(float64(allocs)/float64(b.N)/(1<<20), "alloc-MiB/op")
		})
	}
}

// benchSession starts a session with /h9 run and waits for its run to end.
func benchSession(b *testing.B, e *benchEnv, ctx context.Context) string {
	b.Helper()
	if _, err := e.slack.SlashCommand(ctx, fakeslack.SlashCommand{UserID: "U1", ChannelID: "C1", Text: "run look"}); err != nil {
		b.Fatal(err)
	}
	var thread string
	if err := e.slack.WaitFor(ctx, "the root", func() bool {
		for _, m := range e.slack.Messages("C1") {
			if m.ThreadTS == "" && m.BotID != "" {
				thread = m.TS
				return true
			}
		}
		return false
	}); err != nil {
		b.Fatal(err)
	}
	waitAnswers(b, e, ctx, thread, 1)
	return thread
}

// waitAnswers waits until the thread holds n of the model's answers.
func waitAnswers(b *testing.B, e *benchEnv, ctx context.Context, thread string, n int) {
	b.Helper()
	if err := e.slack.WaitFor(ctx, "the run's answer", func() bool {
		got := 0
		for _, m := range e.slack.Messages("C1") {
			if m.ThreadTS == thread && m.BotID != "" && strings.Contains(m.Text, "answer-ok") {
				got++
			}
		}
		return got >= n
	}); err != nil {
		b.Fatal(err)
	}
}

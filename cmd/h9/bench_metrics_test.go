package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
)

// BenchmarkAckMetrics is bot.BenchmarkAckLatency through the whole of h9
// (run, as main calls it), on three h9 side by side in this process: one
// with H9_HTTP_ADDR off (the hooks are nil), one with it on (every hook
// counts into Prometheus) and one with it on and /metrics scraped every
// 100 ms during the burst (far more often than a Prometheus server
// would). Each iteration sends a burst of 500 "/h9 plan" at once to each
// h9 in turn (who goes first rotates), each command starting a session
// and a run. The latency of one ack runs from the fake writing the
// envelope to it reading the ack.
func BenchmarkAckMetrics(b *testing.B) {
	arms := []*ackArm{
		{name: "off", h9: startBenchH9(b, false)},
		{name: "on", h9: startBenchH9(b, true)},
		{name: "scraped", h9: startBenchH9(b, true), scrape: true},
	}
	for i := 0; b.Loop(); i++ {
		for j := range arms {
			arms[(i+j)%len(arms)].burst(b)
		}
	}
	// The arms with metrics measured them counting: every command is there.
	for _, a := range arms[1:] {
		m := scrapeURL(b, a.h9.base+"/metrics")
		if got := m.value("h9_envelopes_total", "type", "slash_commands"); got < float64(a.sent) {
			b.Errorf("%s: h9_envelopes_total counted %v of the %d commands sent", a.name, got, a.sent)
		}
		// What h9's own histogram says of its p99 (a bucket's bound), to
		// set beside what the fake measured end to end.
		b.ReportMetric(bucketQuantile(m["h9_ack_latency_seconds"].GetMetric()[0].GetHistogram(), .99)*1000, a.name+"-h9-p99-ms")
	}
	for _, a := range arms {
		slices.Sort(a.lat)
		b.ReportMetric(ms(a.lat, 50), a.name+"-p50-ms")
		b.ReportMetric(ms(a.lat, 99), a.name+"-p99-ms")
		b.ReportMetric(float64(a.failed), a.name+"-failed")
	}
}

// ackArm is one h9 of BenchmarkAckMetrics and its acks' latencies.
type ackArm struct {
	name   string
	h9     *benchH9
	scrape bool // /metrics is read every 100 ms during its bursts
	lat    []time.Duration
	failed int
	sent   int
}

// burst sends 500 commands at once and waits for their runs.
func (a *ackArm) burst(b *testing.B) {
	const n = 500
	h := a.h9
	if a.scrape {
		defer h.scrapeEvery(b, 100*time.Millisecond)()
	}
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ack, err := h.slack.SlashCommand(h.ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("plan task %d", a.sent+i), UserID: "U1", ChannelID: "C1"})
			lat[i], errs[i] = ack.Latency, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			a.failed++
			continue
		}
		a.lat = append(a.lat, lat[i])
	}
	a.sent += n
	if err := h.slack.WaitFor(h.ctx, "every run", func() bool { return h.model.Calls() >= a.sent }); err != nil {
		b.Fatal(err)
	}
}

// benchH9 is h9 running in this process on the fakes.
type benchH9 struct {
	ctx   context.Context
	slack *fakeslack.Server
	model *fakemodel.Server
	base  string // H9_HTTP_ADDR's URL, "" when off
}

func startBenchH9(b *testing.B, metrics bool) *benchH9 {
	b.Helper()
	fakes := h9test.New(b, h9test.Options{
		Slack: fakeslack.Options{BotToken: testBotToken, AppToken: testAppToken, EchoBotMessages: true},
		Model: []fakemodel.Option{fakemodel.WithoutRecording(), fakemodel.WithBufferedStreams(),
			fakemodel.WithHandler(func(openai.ChatCompletionRequest) fakemodel.Reply { return fakemodel.Text("ok") })},
		Timeout: 10 * time.Minute, Channels: map[string]string{"C1": "general"}, Users: map[string]string{"U1": "alice"},
	})
	ctx := fakes.Ctx
	h := &benchH9{ctx: ctx, slack: fakes.Slack, model: fakes.Model}
	addr := ""
	if metrics {
		addr = freeLoopbackAddr(b)
	}
	setEnv(b, "SLACK_API_URL", h.slack.APIURL(), "OPENAI_BASE_URL", h.model.URL(), "H9_DATA_DIR", filepath.Join(b.TempDir(), "data"),
		"H9_SANDBOX", "none", "H9_MODEL_RETRIES", "1", "H9_LOG_LEVEL", "warn", "H9_LOG_FORMAT", "json", "H9_HTTP_ADDR", addr)
	cfg, err := loadConfig()
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, cfg, io.Discard) }()
	b.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("run: %v", err)
		}
	})
	if err := h.slack.WaitConnected(ctx); err != nil {
		b.Fatal(err)
	}
	if metrics {
		h.base = "http://" + addr
	}
	return h
}

// freeLoopbackAddr is a loopback address with a port nothing listens on
// (for a benchmark: another process could take it before h9 does).
func freeLoopbackAddr(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeEvery GETs /metrics every d until the returned func is called.
func (h *benchH9) scrapeEvery(b *testing.B, d time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				resp, err := http.Get(h.base + "/metrics")
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// ms is the p-th percentile of sorted durations, in milliseconds.
func ms(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, int(float64(len(sorted))*p/100))
	return float64(sorted[i].Microseconds()) / 1000
}

// bucketQuantile is the upper bound of the first bucket holding the q-th
// quantile of h's observations (its cumulative counts), as
// histogram_quantile would bound it.
func bucketQuantile(h *dto.Histogram, q float64) float64 {
	want := q * float64(h.GetSampleCount())
	for _, bk := range h.GetBucket() {
		if float64(bk.GetCumulativeCount()) >= want {
			return bk.GetUpperBound()
		}
	}
	return math.Inf(1)
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
)

// obsEnv is h9 running in this process (run, as main calls it) against the
// fake Slack and the fake model, serving H9_HTTP_ADDR on a free loopback
// port, with its logs as JSON.
type obsEnv struct {
	t     *testing.T
	fakes *h9test.Fakes // slack, model and ctx are its
	ctx   context.Context
	slack *fakeslack.Server
	model *fakemodel.Server
	logs  lockedBuffer
	base  string // http://host:port of H9_HTTP_ADDR
	stop  context.CancelFunc
	done  chan error

	stopped sync.Once
	runErr  error
}

func startObserved(t *testing.T) *obsEnv {
	t.Helper()
	fakes := h9test.New(t, h9test.Options{
		Slack:   fakeslack.Options{BotToken: testBotToken, AppToken: testAppToken, EchoBotMessages: true},
		Model:   []fakemodel.Option{fakemodel.WithModels("gpt-obs")},
		Timeout: 2 * time.Minute, Channels: map[string]string{"C1": "general"}, Users: map[string]string{"U1": "alice"},
	})
	e := &obsEnv{t: t, fakes: fakes, ctx: fakes.Ctx, slack: fakes.Slack, model: fakes.Model, done: make(chan error, 1)}
	// h9 stops when the test does, before the cleanups (t.Context).
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	setEnv(t, "SLACK_API_URL", e.slack.APIURL(), "OPENAI_BASE_URL", e.model.URL(), "H9_MODEL", "gpt-obs",
		"H9_DATA_DIR", filepath.Join(t.TempDir(), "data"), "H9_SANDBOX", "none", "H9_COALESCE_INTERVAL", "50ms",
		"H9_HTTP_ADDR", "127.0.0.1:0", "H9_LOG_FORMAT", "json")
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	e.stop = stop
	go func() { e.done <- run(runCtx, cfg, &e.logs) }()
	t.Cleanup(func() {
		e.shutdown()
		if t.Failed() {
			t.Logf("h9 logs:\n%s", e.logs.String())
		}
	})
	e.waitFor("h9 to say where it serves", func() bool { return e.listenAddr() != "" })
	e.base = "http://" + e.listenAddr()
	return e
}

// shutdown stops h9 as SIGTERM does and returns what run returned.
func (e *obsEnv) shutdown() error {
	e.stopped.Do(func() {
		e.stop()
		select {
		case e.runErr = <-e.done:
		case <-time.After(time.Minute):
			e.t.Error("h9 did not stop within a minute")
		}
	})
	return e.runErr
}

// listenAddr is the address h9 logged it serves on, "" until it has.
func (e *obsEnv) listenAddr() string {
	sc := bufio.NewScanner(strings.NewReader(e.logs.String()))
	for sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving health checks and metrics" {
			return line.Addr
		}
	}
	return ""
}

// waitFor polls cond until it holds; generous, since the machine is shared.
func (e *obsEnv) waitFor(what string, cond func() bool) {
	e.t.Helper()
	e.fakes.WaitFor(what, cond)
}

// get is one request to h9's HTTP server: the status and the body.
func (e *obsEnv) get(path string) (int, string) {
	e.t.Helper()
	return httpGet(e.t, e.base+path)
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// status is GET path's status alone.
func (e *obsEnv) status(path string) int {
	e.t.Helper()
	code, _ := e.get(path)
	return code
}

// scrape reads /metrics with Prometheus's own text parser.
func (e *obsEnv) scrape() scraped {
	e.t.Helper()
	return scrapeURL(e.t, e.base+"/metrics")
}

func scrapeURL(t testing.TB, url string) scraped {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("/metrics Content-Type %q, want Prometheus text format", ct)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text format: %v", err)
	}
	return scraped(families)
}

// scraped is one scrape's metric families by name.
type scraped map[string]*dto.MetricFamily

// value is the counter or gauge with the given label pairs (name, value,
// …), or a histogram's sample count; -1 when there is no such series.
func (s scraped) value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

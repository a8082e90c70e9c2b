package bot

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/workspace/testenv"
)

// BenchmarkAutomationWebhooks200: signed webhooks at 200 a second through
// the whole bot, as cmd/h9 serves them: the engine records each
// occurrence in the bot's bbolt file, the bot records the start, posts
// the root message to the fake Slack over loopback and asks for its
// permalink, and the session's plan run follows (the model answers at
// once). Each delivery is sent again (a replay, which must answer 200).
// The answer's p50 and p99, beside a handler that only reads the body on
// the same server and client.
func BenchmarkAutomationWebhooks200(b *testing.B) {
	testenv.Full(b, "a whole bot serving webhooks")
	const secret = "whsec-bench-0123456789"
	b.Setenv("H9_BENCH_HOOK_SECRET", secret)
	path := filepath.Join(b.TempDir(), "automations.yaml")
	src := "automations:\n  - name: deploy\n    channel: " + testChannel + "\n    owner: U1\n    mode: run\n    overlap: queue\n    task: 'Deploy {{.n}}'\n    on: {webhook: {secret_env: H9_BENCH_HOOK_SECRET}}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	e := newBenchEnv(b, "", 0, textReply("ok"), func(c *Config) {
		c.AutomationsFile = path
		c.AutomationMinInterval = time.Minute
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"baseline-read-body", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
		})},
		{"signed", e.bot.HookHandler()},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			var mu sync.Mutex
			var lat []time.Duration
			replays := 0
			started := 0
			send := func(body []byte, ts string) (int, string) {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/deploy", bytes.NewReader(body))
				req.Header.Set(automation.HeaderTimestamp, ts)
				req.Header.Set(automation.HeaderSignature, automation.Sign([]byte(secret), ts, body))
				t0 := time.Now()
				resp, err := srv.Client().Do(req)
				if err != nil {
					b.Error(err)
					return 0, ""
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
				return resp.StatusCode, string(answer)
			}
			tick := time.NewTicker(5 * time.Millisecond) // 200 a second
			defer tick.Stop()
			var wg sync.WaitGroup
			i := 0
			for b.Loop() {
				<-tick.C
				i++
				body := []byte(`{"n":` + strconv.Itoa(i) + `,"run":"` + b.Name() + fmt.Sprint(b.N) + `"}`)
				ts := strconv.FormatInt(time.Now().Unix(), 10)
				wg.Go(func() {
					_, first := send(body, ts)
					again, _ := send(body, ts)
					mu.Lock()
					defer mu.Unlock()
					if c.name == "signed" && again != http.StatusOK {
						replays++
					}
					if strings.Contains(first, `"outcome":"started"`) {
						started++
					}
				})
			}
			wg.Wait()
			slices.Sort(lat)
			at := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
			}
			b.ReportMetric(at(0.5), "answer-p50-ms")
			b.ReportMetric(at(0.99), "answer-p99-ms")
			b.ReportMetric(float64(replays), "replays-not-refused")
			// The others are queued behind the session still open
			// (overlap: queue), as the contract has it.
			b.ReportMetric(float64(started)/float64(i), "started/delivery")
		})
	}
}

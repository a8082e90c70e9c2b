package automation

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/forgetest"
	"github.com/h9-app/h9/workspace/testenv"
)

// timedSide is the Slack side, timing each start against the occurrence
// it was due at.
type timedSide struct {
	slackSide
	due   time.Time
	mu    sync.Mutex
	lates []time.Duration
}

func (s *timedSide) StartSession(ctx context.Context, r StartRequest) (Started, error) {
	s.mu.Lock()
	s.lates = append(s.lates, time.Since(s.due))
	s.mu.Unlock()
	return s.slackSide.StartSession(ctx, r)
}

func manySchedules(n, minutes int) string {
	var sb strings.Builder
	sb.WriteString("automations:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - name: s%d\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: Chore %d\n    on: {schedule: \"%d * * * *\"}\n", i, i, i%minutes)
	}
	return sb.String()
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// BenchmarkSchedules1000: 1,000 schedule automations on one replica (bbolt),
// a sixtieth of them due in each minute (or all in the same minute); the fire lateness is from the
// minute to the session's start, the heap is what the engine holds per
// automation once loaded.
func BenchmarkSchedules1000(b *testing.B) {
	for _, spread := range []int{60, 1} {
		for _, atOnce := range []int{16, fireAtOnce} {
			// 16 at once is the baseline: the engine before it fired as
			// many as a group commit takes.
			b.Run(fmt.Sprintf("due-over-%d-minutes/fired-%d-at-once", spread, atOnce), func(b *testing.B) { benchSchedules(b, spread, atOnce) })
		}
	}
}

func benchSchedules(b *testing.B, spread, atOnce int) {
	testenv.Full(b, "a thousand automations' set-up")
	src := manySchedules(1000, spread)
	env := testEnv()
	env.MinInterval = time.Minute
	base := time.Date(2026, 1, 5, 9, 59, 30, 0, time.UTC)
	env.Now = base

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	list, err := Parse(Source{File: "f.yaml"}, []byte(src), env)
	if err != nil {
		b.Fatal(err)
	}
	clk := &clock{t: base}
	side := &timedSide{slackSide: slackSide{open: map[string]bool{}}}
	e := NewEngine(Options{Store: boltStore(b), Bot: side, Replica: "r1", Now: clk.Now})
	e.fireAtOnce = atOnce
	if err := e.Set("f.yaml", list); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heapPer := float64(after.HeapAlloc-before.HeapAlloc) / 1000
	e.catchUp(b.Context())

	b.ResetTimer()
	minute := 0
	for b.Loop() {
		due := base.Add(30*time.Second + time.Duration(minute)*time.Minute)
		minute++
		clk.Set(due)
		side.due = time.Now()
		e.fireDue(b.Context())
		side.closeAll()
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(side.lates, 0.99).Microseconds())/1000, "lateness-p99-ms")
	b.ReportMetric(heapPer, "heap-B/automation")
	b.ReportMetric(float64(len(side.lates))/float64(minute), "fires/op")
}

// doneSide is a Slack side whose sessions are all done.
type doneSide struct{ slackSide }

func (s *doneSide) SessionOpen(context.Context, string, string) (bool, error) { return false, nil }

// BenchmarkWebhooks200: signed webhooks at 200 requests a second through
// the real handler, engine and bbolt store, each delivered twice (the
// replay must be a duplicate); the answer's p99. Baseline: a handler
// that only reads the body, on the same server and client.
func BenchmarkWebhooks200(b *testing.B) {
	testenv.Full(b, "an HTTP server and a store")
	src := "automations:\n  - name: deploy\n    channel: C0123ABCD\n    task: 'Deploy {{.n}}'\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"
	list, err := Parse(Source{File: "f.yaml"}, []byte(src), testEnv())
	if err != nil {
		b.Fatal(err)
	}
	// Each session is done by the next delivery: every delivery starts
	// one (a root message), as a busy hook's would.
	side := &doneSide{slackSide: slackSide{open: map[string]bool{}}}
	e := NewEngine(Options{Store: boltStore(b), Bot: side, Replica: "r1"})
	if err := e.Set("f.yaml", list); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"baseline-read-body", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
		})},
		{"signed", &HookHandler{Firer: e}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			var mu sync.Mutex
			var lat []time.Duration
			dups, started := 0, 0
			send := func(body []byte, ts string) int {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/deploy", bytes.NewReader(body))
				req.Header.Set(HeaderTimestamp, ts)
				req.Header.Set(HeaderSignature, Sign([]byte("s3cret"), ts, body))
				t0 := time.Now()
				resp, err := srv.Client().Do(req)
				if err != nil {
					b.Error(err)
					return 0
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
				return resp.StatusCode
			}
			startedBefore, _ := side.counts()
			tick := time.NewTicker(5 * time.Millisecond) // 200 a second
			defer tick.Stop()
			var wg sync.WaitGroup
			i := 0
			for b.Loop() {
				<-tick.C
				i++
				body := []byte(`{"n":` + strconv.Itoa(i) + `,"run":"` + b.Name() + `"}`)
				ts := strconv.FormatInt(time.Now().Unix(), 10)
				wg.Go(func() {
					first := send(body, ts)
					again := send(body, ts) // a replay
					mu.Lock()
					defer mu.Unlock()
					if first == http.StatusAccepted {
						started++
					}
					if c.name == "signed" && again != http.StatusOK {
						dups++
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "answer-p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "answer-p99-ms")
			b.ReportMetric(float64(dups), "replays-not-refused")
			if c.name == "signed" {
				// Exactly one session per delivery: no more (a replay that
				// started one), no fewer.
				n, _ := side.counts()
				b.ReportMetric(float64(n-startedBefore)/float64(i), "sessions/delivery")
			}
		})
	}
	if n, _ := side.counts(); n == 0 {
		b.Error("no session started")
	}
}

// BenchmarkAtRest1000: the CPU an engine holding 1,000 daily schedules
// (none due within the window) spends at rest on one replica, from
// getrusage (the process's user and system time over the wall time),
// beside an engine holding none. Each iteration is one second of rest of
// the engine's real Run loop (its timer, its sweep every 30 s, its forge
// poll); -benchtime 60x takes in two sweeps.
func BenchmarkAtRest1000(b *testing.B) {
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("automations-%d", n), func(b *testing.B) { benchAtRest(b, n) })
	}
}

func benchAtRest(b *testing.B, n int) {
	testenv.Full(b, "an engine at rest for seconds")
	now := time.Now().UTC()
	hour := (now.Hour() + 12) % 24 // half a day away: nothing fires in the window
	var sb strings.Builder
	sb.WriteString("automations:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - name: s%d\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: Chore %d\n    on: {schedule: \"%d %d * * *\"}\n", i, i, i%60, hour)
	}
	env := testEnv()
	env.Now = now
	var list []*Automation
	if n > 0 {
		var err error
		if list, err = Parse(Source{File: "f.yaml"}, []byte(sb.String()), env); err != nil {
			b.Fatal(err)
		}
	}
	side := &slackSide{open: map[string]bool{}}
	e := NewEngine(Options{Store: boltStore(b), Bot: side, Replica: "r1"})
	if err := e.Set("f.yaml", list); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = e.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	// Loaded: every schedule has its next occurrence (its first-load
	// watermark written).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		known := len(e.next)
		e.mu.Unlock()
		if known == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d schedules loaded after a minute", known, n)
		}
	}
	runtime.GC()
	cpu0, wall0 := processCPU(b), time.Now()
	for b.Loop() {
		time.Sleep(time.Second)
	}
	cpu, wall := processCPU(b)-cpu0, time.Since(wall0)
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%-of-a-core")
	if got, _ := side.counts(); got != 0 {
		b.Errorf("%d sessions started at rest", got)
	}
}

// processCPU is the process's user and system time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFleetPolling: issue and check triggers on quiet repositories
// and their automations files, polled for an hour (60 periods at
// H9_FORGE_POLL=60s and H9_AUTOMATION_REFRESH=1m) by one replica, by two
// that each poll everything (the baseline: before turns were claimed),
// and by two that claim each repository's turn in the store. Forge
// requests are counted by the fake GitHub; fetches by the repository
// cache.
func BenchmarkFleetPolling(b *testing.B) {
	for _, c := range []struct {
		name      string
		replicas  int
		everyTurn bool
	}{{"replicas-1", 1, false}, {"replicas-2-each-polls", 2, true}, {"replicas-2", 2, false}} {
		b.Run(c.name, func(b *testing.B) { benchFleetPolling(b, c.replicas, c.everyTurn) })
	}
}

func benchFleetPolling(b *testing.B, replicas int, everyTurn bool) {
	testenv.Need(b, "git")
	testenv.Full(b, "a fake forge polled for an hour")
	const repos, periods = 2, 60
	bare, _ := forgetest.Bare(b)
	gh := fakegithub.New("ghp_good")
	b.Cleanup(gh.Close)
	var sb strings.Builder
	sb.WriteString("automations:\n")
	var files []RepoFile
	for i := range repos {
		repo := fmt.Sprintf("acme/r%d", i)
		gh.AddRepo(repo, bare, true)
		files = append(files, RepoFile{Repo: repo, Channels: []string{"C0123ABCD"}})
		fmt.Fprintf(&sb, "  - name: triage%d\n    channel: C0123ABCD\n    owner: U0123ABCD\n    repo: %s\n    task: Fix it\n    on: {issue: {label: h9}}\n", i, repo)
		fmt.Fprintf(&sb, "  - name: red%d\n    channel: C0123ABCD\n    owner: U0123ABCD\n    repo: %s\n    task: Fix it\n    on: {check: {branch: %s}}\n", i, repo, forgetest.Branch)
	}
	env := testEnv()
	for _, f := range files {
		env.Repos = append(env.Repos, f.Repo)
	}
	list, err := Parse(Source{File: "f.yaml"}, []byte(sb.String()), env)
	if err != nil {
		b.Fatal(err)
	}
	st := boltStore(b) // one store: the fleet's database
	side := &slackSide{open: map[string]bool{}}
	reader := &countingReader{file: repoValid}
	clk := &clock{t: time.Now().Truncate(time.Minute).Add(-time.Hour)}
	var engines []*Engine
	var refreshers []*RepoFiles
	for r := range replicas {
		e := NewEngine(Options{Store: st, Bot: side, Replica: fmt.Sprint("r", r), Now: clk.Now, Forges: perRepoForges{gh}})
		e.everyTurn = everyTurn
		if err := e.Set("f.yaml", list); err != nil {
			b.Fatal(err)
		}
		engines = append(engines, e)
		refreshers = append(refreshers, NewRepoFiles(e, reader, files, env, time.Minute))
	}
	period := func() {
		clk.Set(clk.Now().Add(time.Minute))
		var wg sync.WaitGroup
		for r, e := range engines {
			wg.Go(func() {
				time.Sleep(time.Duration(r) * time.Millisecond) // each replica at its own moment
				e.pollForges(b.Context())
				refreshers[r].refreshAll(b.Context())
			})
		}
		wg.Wait()
	}
	period() // the first poll only loads (no backfill)
	before := len(gh.Requests())
	reader.mu.Lock()
	fetches0 := reader.fetches
	reader.mu.Unlock()
	hours := 0
	for b.Loop() {
		for range periods {
			period()
		}
		hours++
	}
	reader.mu.Lock()
	fetches := reader.fetches - fetches0
	reader.mu.Unlock()
	all, counted := 0, 0
	for _, r := range gh.Requests()[before:] {
		all++
		if r.Status != http.StatusNotModified {
			counted++
		}
	}
	perHour := float64(repos * hours)
	b.ReportMetric(float64(all)/perHour, "forge-requests/repo/hour")
	b.ReportMetric(float64(counted)/perHour, "not-304/repo/hour")
	b.ReportMetric(float64(fetches)/perHour, "fetches/repo/hour")
}

// perRepoForges reads each repository on the fake GitHub through h9's
// real forge client.
type perRepoForges struct{ gh *fakegithub.Server }

func (f perRepoForges) Forge(repo string) (forge.Client, error) {
	return forge.New(forge.Project{Kind: forge.GitHub, Path: repo, API: f.gh.URL(), TokenEnv: "H9_GITHUB_TOKEN"}, "ghp_good", nil)
}

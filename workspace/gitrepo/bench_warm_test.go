package gitrepo

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace"
)

// benchModule is a Go module whose setup is a real `go mod download` of
// h9's own dependency set, from a module proxy served on loopback out of
// this machine's module cache (tests reach nothing else).
func benchModule(b *testing.B) (files map[string]string, proxy string) {
	b.Helper()
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		b.Fatal(err)
	}
	goSum, err := os.ReadFile("../../go.sum")
	if err != nil {
		b.Fatal(err)
	}
	// `go mod download` in the set-up fetches every module go.mod names,
	// including ones h9's own build never needed (their zips are then absent
	// from a fresh machine's cache), so fill the cache first.
	fill := exec.Command("go", "mod", "download")
	fill.Dir = "../.."
	if out, err := fill.CombinedOutput(); err != nil {
		b.Fatalf("go mod download: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(filepath.Join(strings.TrimSpace(string(out)), "cache", "download")))}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	mod := strings.Replace(string(goMod), "module github.com/h9-app/h9", "module example.com/bench", 1)
	return map[string]string{
		"go.mod": mod, "go.sum": string(goSum),
		"main.go":      "package main\n\nimport (\n\t_ \"github.com/jackc/pgx/v5\"\n\t_ \"github.com/kelseyhightower/envconfig\"\n)\n\nfunc main() {}\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
	}, "http://" + l.Addr().String()
}

// BenchmarkWarmSessionStart is the time from a session's start to its
// checkout being ready for the first model request on a repository whose
// setup is `go mod download`: without a set-up spare and without the
// repository's cache (every session downloads), against a set-up spare.
func BenchmarkWarmSessionStart(b *testing.B) {
	files, proxy := benchModule(b)
	setup := "GOPROXY=" + proxy + " GOSUMDB=off GOFLAGS=-modcacherw go mod download"
	for _, spares := range []bool{false, true} {
		name := map[bool]string{false: "cold-no-spare", true: "set-up-spare"}[spares]
		b.Run(name, func(b *testing.B) {
			remote := newRemote(b, files)
			f := newFixture(b, "bwrap", Repo{Name: "m", URL: remote, Setup: setup}, func(c *Config) { c.Spares = spares })
			cache, _ := f.repos.cacheDir(Repo{Name: "m"})
			f.prepareAndSetUp(b)
			var setupTime time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if err := f.repos.WaitSpares(); err != nil {
					b.Fatal(err)
				}
				if !spares {
					os.RemoveAll(cache) // phase two's sessions each started with an empty HOME
				}
				b.StartTimer()
				start := time.Now()
				if p, _ := f.prepareAndSetUp(b); spares && !p.SetUp {
					b.Fatalf("iteration %d did not take a set-up spare: %+v", i, p)
				}
				setupTime += time.Since(start)
			}
			b.ReportMetric(float64(setupTime.Milliseconds())/float64(b.N), "ms-to-ready/op")
		})
	}
}

// BenchmarkFirstGoTest is a session's first `go test ./...` on a
// repository an earlier session built (the repository's cache), against
// the same command run twice in a row by hand in one workspace.
func BenchmarkFirstGoTest(b *testing.B) {
	files, proxy := benchModule(b)
	setup := "GOPROXY=" + proxy + " GOSUMDB=off GOFLAGS=-modcacherw go mod download"
	remote := newRemote(b, files)
	f := newFixture(b, "bwrap", Repo{Name: "m", URL: remote, Setup: setup}, func(c *Config) { c.Spares = true })
	const test = "GOPROXY=off GOFLAGS=-mod=mod go test -count=1 ./..."
	_, earlier := f.prepareAndSetUp(b)
	runTimed(b, f, earlier, test) // the earlier session built everything once
	var session, byHand time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := f.repos.WaitSpares(); err != nil {
			b.Fatal(err)
		}
		_, s := f.prepareAndSetUp(b)
		b.StartTimer()
		session += runTimed(b, f, s, test)
		runTimed(b, f, s, test)
		byHand += runTimed(b, f, s, test)
	}
	b.ReportMetric(float64(session.Milliseconds())/float64(b.N), "ms-first-of-session/op")
	b.ReportMetric(float64(byHand.Milliseconds())/float64(b.N), "ms-warm-by-hand/op")
}

func runTimed(b *testing.B, f *fixture, s Session, command string) time.Duration {
	ws := f.open(s)
	start := time.Now()
	res, err := ws.Bash(f.ctx, command, workspace.BashOptions{Timeout: workspace.MaxBashTimeout})
	d := time.Since(start)
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("%s: err %v, exit %d: %s", command, err, res.ExitCode, res.Output)
	}
	return d
}

// prepareAndSetUp starts a session as the bot does: its checkout, then
// its repository's setup unless the spare it took ran it already.
func (f *fixture) prepareAndSetUp(b *testing.B) (Prepared, Session) {
	b.Helper()
	p, s := f.prepareAndReport("m")
	if !p.SetUp {
		res, _, err := f.repos.Setup(f.ctx, s)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("setup: %v %s", err, res.Output)
		}
	}
	return p, s
}

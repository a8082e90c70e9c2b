package bot

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// BenchmarkRepoSessionStart: `/h9 plan [repo=bench] …` on a cached
// repository, from the slash command to the model's first request (the
// fetch, the checkout on its branch, the plan run's start), side by side
// with a plain `git clone --no-local` of the same repository. Budget:
// under 1 s and under 20 % of the clone's time; a session's checkout costs
// under 1 MiB of disk beyond its working tree. The smoke uses a small
// repository; H9_BENCH_REPO=full is the size (BENCHMARKS.md).
func BenchmarkRepoSessionStart(b *testing.B) {
	shape := benchShape()
	remote := benchRemote(b, shape)
	b.Run("h9", func(b *testing.B) { benchSessionStart(b, remote, false) })
	b.Run("h9-spare", func(b *testing.B) { benchSessionStart(b, remote, true) })
	b.Run("clone", func(b *testing.B) { benchClone(b, remote) })
}

// benchSessionStart times sessions one after another; with spares, each
// starts once the spare the previous one asked for is made (a cached
// repository between two sessions), without, each writes its tree.
func benchSessionStart(b *testing.B, remote string, spares bool) {
	dir := b.TempDir()
	e, asked, repos := newRepoBenchEnv(b, dir, remote, spares)
	ctx := context.Background()
	start := func(i int) time.Duration {
		before := len(asked())
		begin := time.Now()
		if _, err := e.slack.SlashCommand(ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("plan [repo=bench] look around %d", i)}); err != nil {
			b.Fatal(err)
		}
		var at time.Time
		e.waitFor(b, "the first model request", func() bool {
			if times := asked(); len(times) > before {
				at = times[before]
				return true
			}
			return false
		})
		e.waitFor(b, "the run's end", func() bool { return e.bot.reg.idleCount() == 0 })
		if err := repos.WaitSpares(); err != nil {
			b.Fatal(err)
		}
		return at.Sub(begin)
	}
	defer func() {
		if b.Failed() {
			for _, m := range e.slack.Messages("C1") {
				b.Logf("message %s in %s: %q", m.TS, m.ThreadTS, m.Text)
			}
		}
	}()
	start(0) // fills the cache: sessions after it start on a cached repository
	var took []time.Duration
	for b.Loop() {
		took = append(took, start(len(took)+1))
	}
	b.ReportMetric(percentile(took, 50), "ms/first-request")
	b.ReportMetric(percentile(took, 0), "min-ms")
	extra, tree := checkoutCost(b, filepath.Join(dir, "workspaces"), filepath.Join(dir, "repos", "bench", "sessions"))
	b.ReportMetric(float64(extra)/1024, "KiB-beyond-tree")
	b.ReportMetric(float64(tree)/(1<<20), "MiB-tree")
}

// newRepoBenchEnv is a bot with the repository "bench" at remote; asked
// returns when each model request came (a session's run asks once).
func newRepoBenchEnv(b *testing.B, dir, remote string, spares bool) (e *benchEnv, asked func() []time.Time, repos *gitrepo.Repos) {
	var mu sync.Mutex
	var times []time.Time
	handler := func(openai.ChatCompletionRequest) fakemodel.Reply {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		return fakemodel.Text("No plan.")
	}
	e = benchEnvOn(benchFakes(b, fakemodel.WithoutRecording(), fakemodel.WithBufferedStreams(), fakemodel.WithHandler(handler)))
	e.repos = func(ws *workspace.Manager) Repos {
		r, err := gitrepo.New(gitrepo.Config{Dir: filepath.Join(dir, "repos"), Workspaces: ws, Spares: spares,
			Repos: []gitrepo.Repo{{Name: "bench", URL: remote}}, Author: gitrepo.Identity{Name: "h9", Email: "h9@localhost"}})
		if err != nil {
			b.Fatal(err)
		}
		repos = r
		return r
	}
	e.startBot(b, dir, nil)
	b.Cleanup(func() { e.stop(); e.db.Close(); repos.Close() })
	return e, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(times)
	}, repos
}

func benchClone(b *testing.B, remote string) {
	var took []time.Duration
	for b.Loop() {
		dst := filepath.Join(b.TempDir(), "clone")
		begin := time.Now()
		if out, err := exec.Command("git", "clone", "--quiet", "--no-local", remote, dst).CombinedOutput(); err != nil {
			b.Fatalf("clone: %v\n%s", err, out)
		}
		took = append(took, time.Since(begin))
		os.RemoveAll(dst)
	}
	b.ReportMetric(percentile(took, 50), "ms/clone")
	b.ReportMetric(percentile(took, 0), "min-ms")
}

// checkoutCost is one session's disk beyond its working tree: the blocks
// of its .git that are its own (a hard link to the cache's packs costs
// nothing), and of its repository in the cache; and its working tree.
func checkoutCost(tb testing.TB, workspaces, sessions string) (extra, tree int64) {
	tb.Helper()
	entries, err := os.ReadDir(workspaces)
	if err != nil {
		tb.Fatal(err)
	}
	var last string
	for _, en := range entries {
		if en.IsDir() && !strings.HasPrefix(en.Name(), ".") {
			last = en.Name()
		}
	}
	ws := filepath.Join(workspaces, last)
	blocks := func(root string, own func(path string, st *syscall.Stat_t) bool) int64 {
		var sum int64
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			st := fi.Sys().(*syscall.Stat_t)
			if own(p, st) {
				sum += st.Blocks * 512
			}
			return nil
		})
		return sum
	}
	gitDir := filepath.Join(ws, ".git")
	extra = blocks(gitDir, func(_ string, st *syscall.Stat_t) bool {
		return st.Mode&syscall.S_IFMT == syscall.S_IFDIR || st.Nlink == 1
	})
	extra += blocks(filepath.Join(sessions, last+".git"), func(string, *syscall.Stat_t) bool { return true })
	tree = blocks(ws, func(p string, _ *syscall.Stat_t) bool { return !strings.HasPrefix(p, gitDir) })
	return extra, tree
}

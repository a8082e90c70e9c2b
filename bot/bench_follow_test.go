package bot

import (
	"context"
	"fmt"
	"github.com/h9-app/h9/bot/follow"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// benchPoll is H9_FORGE_POLL in the following benchmarks, read from the
// setting itself; unset, its floor (10s, the busiest h9 can be made).
var benchPoll = func() time.Duration {
	d, err := time.ParseDuration(os.Getenv("H9_FORGE_POLL"))
	if err != nil || d < MinForgePoll {
		return MinForgePoll
	}
	return d
}()

// followBench is a bot following n pull requests on the fake GitHub:
// sessions as h9 leaves them once it opened their requests (each its own
// thread, branch and pull request), stored before the bot starts, which
// picks them up as a restart does.
type followBench struct {
	*benchEnv
	gh      *fakegithub.Server
	threads []string // each session's thread, in pull request order
	head    string   // every pull request's head commit
}

func newFollowBench(b *testing.B, n int) *followBench {
	b.Helper()
	remote := newTestRemote(b, map[string]string{"README.md": "# backend\n"})
	work := filepath.Join(b.TempDir(), "work")
	runGit(b, "", "clone", "--quiet", remote, work)
	runGit(b, work, "commit", "--quiet", "--allow-empty", "-m", "work")
	head := strings.TrimSpace(runGit(b, work, "rev-parse", "HEAD"))
	for i := 1; i <= n; i++ {
		runGit(b, work, "push", "--quiet", "origin", fmt.Sprintf("HEAD:refs/heads/h9/bench-%d", i))
	}
	gh := h9test.GitHub(b, testGitHubToken, "acme/backend", remote)
	dir := b.TempDir()
	repoCfg := func(ws *workspace.Manager) gitrepo.Config {
		return gitrepo.Config{Dir: filepath.Join(dir, "repos"), Workspaces: ws,
			Repos:  []gitrepo.Repo{{Name: "backend", URL: remote, GitHub: "acme/backend"}},
			Author: gitrepo.Identity{Name: "h9", Email: "h9@localhost"}, GitHubToken: testGitHubToken, GitHubAPI: gh.URL()}
	}
	e := benchEnvOn(benchFakes(b, fakemodel.WithoutRecording(), fakemodel.WithHandler(func(openai.ChatCompletionRequest) fakemodel.Reply { return fakemodel.Text("ok") })))
	fb := &followBench{benchEnv: e, gh: gh, head: head}
	fb.writeFixture(b, dir, repoCfg(nil), n)
	var repos *gitrepo.Repos
	e.repos = func(ws *workspace.Manager) Repos {
		r, err := gitrepo.New(repoCfg(ws))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(r.Close)
		repos = r
		return r
	}
	e.startBot(b, dir, func(c *Config) { c.Forges, c.ForgePoll = repos, benchPoll })
	b.Cleanup(func() {
		if e.stop != nil {
			e.stop()
			e.db.Close()
		}
	})
	return fb
}

// writeFixture opens n pull requests and stores a followed session for
// each, in a thread of its own.
func (fb *followBench) writeFixture(b *testing.B, dir string, cfg gitrepo.Config, n int) {
	repos, err := gitrepo.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer repos.Close()
	c, err := repos.Forge("backend")
	if err != nil {
		b.Fatal(err)
	}
	db := h9test.OpenBolt(b, dir)
	defer db.Close()
	st := openStore(b, db)
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		branch := fmt.Sprintf("h9/bench-%d", i)
		pr, err := c.OpenRequest(ctx, branch, "main", "bench", "")
		if err != nil {
			b.Fatal(err)
		}
		thread := fmt.Sprintf("1600000000.%06d", i) // no bot runs yet to take a message
		now := time.Now()
		s := &Session{ID: newSessionID(testTeam, testChannel, thread), Team: testTeam, Channel: testChannel, ThreadTS: thread,
			Owner: testUser, Task: "bench", State: stateDone, ChecklistTS: thread, Created: now,
			Repo:   &SessionRepo{Name: "backend", Branch: branch, Ready: true, PullRequest: pr.URL},
			Follow: &follow.Follow{Forge: forge.GitHub, Number: pr.Number, URL: pr.URL, Mode: gitrepo.FollowAsk, Touched: now, NextPoll: now}}
		rec, err := s.record()
		if err == nil {
			err = st.PutSession(ctx, rec)
		}
		if err != nil {
			b.Fatal(err)
		}
		fb.threads = append(fb.threads, thread)
	}
}

// BenchmarkFollowCommentToThread: the time from a comment's creation on
// the fake GitHub to its batch message in the thread, one followed pull
// request, H9_FORGE_POLL (10s unless set); each comment lands at a different point
// of the poll's period. Budget: at most the poll + 2 s.
func BenchmarkFollowCommentToThread(b *testing.B) {
	fb := newFollowBench(b, 1)
	fb.gh.SetPermission("alice", "write")
	thread := fb.threads[0]
	fb.waitFor(b, "the first poll", func() bool { n, _ := fb.bot.ForgeRequests(); return n > 0 })
	var took []time.Duration
	for b.Loop() {
		time.Sleep(time.Duration(len(took)%5) * benchPoll / 5) // spread over the period
		seen := len(botMessagesIn(fb, thread, "review comment"))
		at := time.Now()
		fb.gh.AddComment("acme/backend", 1, "alice", fmt.Sprintf("nit %d", len(took)))
		fb.waitFor(b, "the batch", func() bool { return len(botMessagesIn(fb, thread, "review comment")) > seen })
		took = append(took, time.Since(at))
	}
	b.ReportMetric(percentile(took, 50), "p50-ms")
	b.ReportMetric(percentile(took, 100), "max-ms")
	b.ReportMetric(float64((benchPoll + 2*time.Second).Milliseconds()), "budget-ms")
}

// BenchmarkFollowAtRest: h9's CPU while it follows quiet pull requests,
// none (baseline) and 100, each iteration one poll period; the CPU is the
// whole test process's (the fake GitHub and Slack included), so h9's own
// is at most that. Also the forge requests per followed request per hour,
// the share answered 304 and the rest, which the rate limit counts. The
// 100 heads have no check (read every poll until one appears, issue 31)
// or a finished one (read every 10th poll). Budget: under 1 % of one core
// per 100.
func BenchmarkFollowAtRest(b *testing.B) {
	b.Run("followed-0", func(b *testing.B) { benchAtRest(b, 0, false) })
	b.Run("followed-100", func(b *testing.B) { benchAtRest(b, 100, false) })
	b.Run("followed-100-checked", func(b *testing.B) { benchAtRest(b, 100, true) })
}

func benchAtRest(b *testing.B, n int, checked bool) {
	fb := newFollowBench(b, n)
	if checked {
		fb.gh.AddCheckRun("acme/backend", fb.head, "build", "github-actions", "success", "")
	}
	fb.waitFor(b, "every request read once", func() bool { r, _ := fb.bot.ForgeRequests(); return r >= int64(4*n) })
	time.Sleep(benchPoll) // past the first reads, which are not at rest
	req0, cached0 := fb.bot.ForgeRequests()
	cpu0, wall0 := processCPU(), time.Now()
	for b.Loop() {
		time.Sleep(benchPoll)
	}
	cpu, wall := processCPU()-cpu0, time.Since(wall0)
	req, cached := fb.bot.ForgeRequests()
	req, cached = req-req0, cached-cached0
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%core")
	if n > 0 {
		b.ReportMetric(float64(req)/float64(n)/wall.Hours(), "requests/PR/hour")
		b.ReportMetric(100*float64(cached)/float64(max(req, 1)), "%304")
		b.ReportMetric(float64(req-cached)/float64(n)/wall.Hours(), "counted/PR/hour")
	}
}

func botMessagesIn(fb *followBench, thread, marker string) []string {
	var out []string
	for _, m := range fb.slack.Thread(testChannel, thread) {
		if m.BotID != "" && strings.Contains(m.Text, marker) {
			out = append(out, m.TS)
		}
	}
	return out
}

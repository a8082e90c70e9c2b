package automation

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/forgetest"
	"github.com/h9-app/h9/workspace/testenv"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Two replicas on one PostgreSQL database, each with its own engine and
// its own connection pool, fire each occurrence of a schedule once, and a
// webhook delivered to both once.
func TestFleetFiresOnceOnPostgres(t *testing.T) {
	testenv.Need(t, "postgres")
	url := pgtest.New(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	src := hourly + "  - name: deploy\n    channel: C0123ABCD\n    task: Deploy\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"
	var engines []*Engine
	for _, r := range []string{"r1", "r2"} {
		st, err := pgstore.Open(context.Background(), url, pgstore.Options{Replica: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		e, _ := engineFor(t, st, bot, clk, r, src)
		e.catchUp(t.Context())
		engines = append(engines, e)
	}
	for h := 10; h <= 12; h++ {
		clk.Set(time.Date(2026, 1, 5, h, 0, 0, 0, time.UTC))
		var wg sync.WaitGroup
		for _, e := range engines {
			wg.Go(func() { e.fireDue(t.Context()) })
		}
		wg.Wait()
		bot.closeAll()
	}
	if n, _ := bot.counts(); n != 3 {
		t.Fatalf("%d sessions for three occurrences on two replicas, want 3", n)
	}
	body := []byte(`{"x":1}`)
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, e := range engines {
		wg.Go(func() {
			p, _ := decodePayload(body)
			out, err := e.FireWebhook(t.Context(), e.WebhookAutomation("deploy"), Delivery{Body: body, Payload: p, Timestamp: "1767600000"})
			if err != nil {
				t.Error(err)
			}
			results[i] = out.Result
		})
	}
	wg.Wait()
	if n, _ := bot.counts(); n != 4 {
		t.Errorf("one webhook delivered to two replicas: %d sessions in all, want 4 (%v)", n, results)
	}
}

// countingReader is a repository cache whose fetches are counted; the
// file it reads is the repository's automations file.
type countingReader struct {
	mu      sync.Mutex
	fetches int
	file    string
}

func (r *countingReader) Fetch(context.Context, string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetches++
	return "", nil
}

func (r *countingReader) ReadDefaultBranchFile(context.Context, string, string) ([]byte, bool, error) {
	return []byte(r.file), true, nil
}

// In a fleet, one replica polls each repository's forge and fetches each
// repository for its automations file each period: two replicas on one
// PostgreSQL database make the forge requests and the fetches of one, and
// the other replica puts the file the first one read in force.
func TestFleetPollsEachRepositoryOnceOnPostgres(t *testing.T) {
	testenv.Need(t, "postgres")
	testenv.Need(t, "git")
	src := `automations:
  - name: triage
    channel: C0123ABCD
    owner: U0123ABCD
    repo: acme/api
    task: Fix the issue
    on: {issue: {label: h9}}
  - name: red
    channel: C0123ABCD
    owner: U0123ABCD
    repo: acme/api
    task: Make the build green
    on: {check: {branch: ` + forgetest.Branch + `}}
`
	const periods = 6
	run := func(replicas int) (requests, fetches int, inForce []string) {
		url := pgtest.New(t)
		bare, head := forgetest.Bare(t)
		gh := fakegithub.New("ghp_good")
		t.Cleanup(gh.Close)
		gh.AddRepo("acme/api", bare, true)
		gh.SetPermission("alice", "write")
		bot := &slackSide{open: map[string]bool{}}
		reader := &countingReader{file: repoValid}
		start := time.Now().Truncate(DefaultPoll).Add(-periods * DefaultPoll)
		clk := &clock{t: start.Add(time.Second)}
		var engines []*Engine
		var files []*RepoFiles
		for i := range replicas {
			st, err := pgstore.Open(context.Background(), url, pgstore.Options{Replica: fmt.Sprint("r", i)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			e, _ := engineFor(t, st, bot, clk, fmt.Sprint("r", i), src)
			e.SetForges(githubForges{gh})
			engines = append(engines, e)
			files = append(files, NewRepoFiles(e, reader, []RepoFile{{Repo: "acme/api", Channels: []string{"C0123ABCD"}}}, testEnv(), DefaultPoll))
		}
		for p := range periods {
			// Each replica polls once a period, at its own moment in it.
			clk.Set(start.Add(time.Duration(p)*DefaultPoll + time.Second))
			if p == 2 {
				n := gh.AddIssue("acme/api", "bob", "Login fails", "body")
				gh.Label("acme/api", n, "h9", "alice")
				gh.AddCheckRun("acme/api", head, "unit-tests", "github-actions", "failure", "FAIL")
			}
			var wg sync.WaitGroup
			for i, e := range engines {
				wg.Go(func() {
					e.pollForges(t.Context())
					files[i].refreshAll(t.Context())
				})
			}
			wg.Wait()
		}
		if n, _ := bot.counts(); n != 2 {
			t.Errorf("%d replicas: %d sessions, want 2 (the labelled issue, the failing head)", replicas, n)
		}
		for _, e := range engines {
			if e.Get("acme/api/tidy") == nil {
				t.Errorf("%d replicas: a replica does not have the repository's automation in force", replicas)
			}
		}
		return len(gh.Requests()), reader.fetches, nil
	}
	oneReq, oneFetch, _ := run(1)
	twoReq, twoFetch, _ := run(2)
	t.Logf("forge requests: one replica %d, two %d; fetches: one %d, two %d", oneReq, twoReq, oneFetch, twoFetch)
	if oneReq == 0 || oneFetch != periods {
		t.Fatalf("one replica: %d requests, %d fetches over %d periods", oneReq, oneFetch, periods)
	}
	if twoReq != oneReq || twoFetch != oneFetch {
		t.Errorf("two replicas made %d forge requests and %d fetches; one replica made %d and %d", twoReq, twoFetch, oneReq, oneFetch)
	}
}

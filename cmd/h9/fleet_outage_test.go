package main

import (
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/bot/fakeslack"
)

// shutdownDeadline is how long h9 may take to exit after SIGTERM with its
// database not answering: the bot's 30 s grace for sessions to save, its
// hard stop, the store's 3 s bound on closing its pool, and room for a loaded
// machine.
const shutdownDeadline = 45 * time.Second

// The database paused (SIGSTOP on every PostgreSQL process: connections
// open and silent, as in a network partition) for longer than the lease
// TTL, during a burst on three replicas. Meanwhile /readyz says not ready,
// /h9 status is answered, and a replica told to stop (SIGTERM) exits within
// its deadline. Once the database resumes (SIGCONT) h9 recovers by itself:
// every session finishes, each message once, /readyz is ready again and
// the goroutines come back down.
func TestFleetBinaryRidesOutAPausedDatabase(t *testing.T) {
	testenv.Need(t, "postgres")
	srv := pgtest.Own(t)
	f := newFleetBinOn(t, srv.Database(t))
	f.model.SetHandler(perTaskScript)
	addrs := map[string]string{}
	for _, r := range []string{"r1", "r2", "r3"} {
		addrs[r] = freeLoopbackAddr(t)
		f.start(r, "H9_HTTP_ADDR="+addrs[r])
	}
	resting := goroutines(t, addrs["r1"])
	threads := f.burst(6, "outage")
	f.waitFor("every session under way", func() bool { return f.allUnderWay(threads) })

	srv.Pause()
	paused := time.Now()
	f.signal("r3", syscall.SIGTERM)
	for _, r := range []string{"r1", "r2"} {
		f.waitFor(r+" not ready", func() bool { return readyz(addrs[r]) == http.StatusServiceUnavailable })
	}
	for range 5 {
		f.slash("status")
	}
	f.waitEphemeral("could not read its sessions")
	t.Logf("not ready and /h9 status answered %v into the pause", time.Since(paused).Round(time.Millisecond))
	peak := goroutines(t, addrs["r1"])
	select {
	case err := <-f.procs["r3"].exited:
		f.procs["r3"].cmd = nil
		t.Logf("r3 exited %v after SIGTERM with the database paused (%v)", time.Since(paused).Round(time.Millisecond), err)
	case <-time.After(shutdownDeadline - time.Since(paused)):
		t.Fatalf("r3 did not exit within %v of SIGTERM while the database was paused", shutdownDeadline)
	}
	if held := time.Since(paused); held < 3*fleetTTL {
		time.Sleep(3*fleetTTL - held) // the scenario: a pause well past the lease TTL
	}
	peak = max(peak, goroutines(t, addrs["r1"]))
	srv.Resume()
	t.Logf("database paused for %v; r1 goroutines at rest %d, during the pause %d", time.Since(paused).Round(time.Millisecond), resting, peak)

	for _, th := range threads {
		f.waitChecklist(th, "2/2 tasks", "done")
		f.waitMsg(th, "Finished ", 1) // the checklist's last edit comes before the outcome
		f.checkThread(th, "Finished ")
	}
	for _, r := range []string{"r1", "r2"} {
		f.waitFor(r+" ready again", func() bool { return readyz(addrs[r]) == http.StatusOK })
	}
	f.waitFor("r1's goroutines back to rest", func() bool { return goroutines(t, addrs["r1"]) <= resting+goroutineSlack })
	if peak > resting+maxOutageGoroutines {
		t.Errorf("r1 ran %d goroutines during the outage, %d at rest: not bounded", peak, resting)
	}
}

// goroutineSlack is how far above its resting count a replica's goroutines
// may stay once idle again (pooled connections' readers, timers).
const goroutineSlack = 20

// maxOutageGoroutines bounds the goroutines a replica adds while its
// database hangs under this test's load: each session's actor and run,
// the work queue's workers, not one per waiting call.
const maxOutageGoroutines = 300

// burst starts n sessions at once ("run <word> i") and returns their threads.
func (f *fleetBin) burst(n int, word string) []string {
	f.t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := f.slack.SlashCommand(f.ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("run %s %d", word, i), UserID: "U1", ChannelID: "C1"}); err != nil {
				f.t.Error(err)
			}
		})
	}
	wg.Wait()
	threads := make([]string, n)
	for i := range threads {
		threads[i] = f.rootOf(fmt.Sprintf("run: %s %d", word, i))
	}
	return threads
}

// readyz is the status of GET /readyz at addr (0 when it does not answer).
func readyz(addr string) int {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// goroutines is the h9_go_goroutines gauge of the h9 serving addr.
func goroutines(t testing.TB, addr string) int {
	t.Helper()
	return int(scrapeURL(t, "http://"+addr+"/metrics").value("h9_go_goroutines"))
}

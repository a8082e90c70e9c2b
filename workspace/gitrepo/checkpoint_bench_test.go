package gitrepo

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCheckpoint100Files is the checkpoint of a todo that changed 100
// files of a 1,000-file repository, under bwrap: the sandboxed commit and
// bundle, and h9 taking the bundle into the session's repository.
func BenchmarkCheckpoint100Files(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("src/f%04d.txt", i)] = fmt.Sprintf("line %d\n", i)
	}
	remote := newRemote(b, files)
	f := newFixture(b, "bwrap", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	dir := f.dir(s)
	var spent time.Duration
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		changed := map[string]string{}
		for i := range 100 {
			changed[filepath.Join("src", fmt.Sprintf("f%04d.txt", i*10))] = fmt.Sprintf("round %d\n", round)
		}
		writeFiles(b, dir, changed)
		b.StartTimer()
		start := time.Now()
		c, err := f.repos.Checkpoint(f.ctx, ws, s, "todo", nil)
		spent += time.Since(start)
		if err != nil || c == nil || c.Files != 100 {
			b.Fatalf("checkpoint: %+v, %v", c, err)
		}
	}
	b.ReportMetric(float64(spent.Microseconds())/1000/float64(b.N), "ms/checkpoint")
}

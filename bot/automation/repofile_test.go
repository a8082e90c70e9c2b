package automation

import (
	"strings"
	"sync"
	"testing"
)

const repoValid = "automations:\n  - name: tidy\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: Tidy up\n    on: {schedule: \"0 9 * * 1\"}\n"

// Two replicas on one store read the same pushes of a repository's file:
// each puts a valid version in force; an invalid one is said once between
// them, and the last valid version stays; a deleted file removes them.
func TestRepoFileOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	bot := &slackSide{open: map[string]bool{}}
	rf := RepoFile{Repo: "backend", Channels: []string{"C0123ABCD"}}
	var replicas []*RepoFiles
	for _, r := range []string{"r1", "r2"} {
		e := NewEngine(Options{Store: st, Bot: bot, Replica: r})
		replicas = append(replicas, NewRepoFiles(e, nil, []RepoFile{rf}, testEnv(), 0))
	}
	apply := func(data string) {
		var wg sync.WaitGroup
		for _, r := range replicas {
			wg.Go(func() {
				var b []byte
				if data != "" {
					b = []byte(data)
				}
				r.Apply(t.Context(), rf, b)
			})
		}
		wg.Wait()
	}
	names := func(r *RepoFiles) string {
		var out []string
		for _, a := range r.e.All() {
			out = append(out, a.Name)
		}
		return strings.Join(out, ",")
	}
	apply(repoValid)
	for _, r := range replicas {
		if got := names(r); got != "backend/tidy" {
			t.Fatalf("in force: %q", got)
		}
	}
	broken := strings.Replace(repoValid, "task:", "tsk:", 1)
	apply(broken)
	apply(broken) // the same content again: nothing
	_, posts := bot.counts()
	if len(posts) != 1 || !strings.Contains(posts[0], "backend/.h9/automations.yaml: line 5") || !strings.Contains(posts[0], "tsk") {
		t.Fatalf("said %q, want once with the file, line and key", posts)
	}
	for _, r := range replicas {
		if got := names(r); got != "backend/tidy" {
			t.Fatalf("after an invalid push, in force: %q", got)
		}
	}
	// A new replica (a restart) restores the last valid version and does
	// not say the invalid one again.
	e3 := NewEngine(Options{Store: st, Bot: bot, Replica: "r3"})
	r3 := NewRepoFiles(e3, nil, []RepoFile{rf}, testEnv(), 0)
	r3.restore(t.Context(), rf)
	r3.Apply(t.Context(), rf, []byte(broken))
	if got := names(r3); got != "backend/tidy" {
		t.Fatalf("restored: %q", got)
	}
	if _, posts := bot.counts(); len(posts) != 1 {
		t.Fatalf("said again after a restart: %q", posts)
	}
	apply("")
	for _, r := range replicas {
		if got := names(r); got != "" {
			t.Fatalf("after the file is deleted, in force: %q", got)
		}
	}
}

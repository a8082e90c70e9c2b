package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// The demo plays a whole session on the real h9 and prints what a person
// would see in the thread, from the root to the pull request's URL and the
// review comment h9 addresses after it.
func TestDemoPrintsASession(t *testing.T) {
	testenv.Full(t, "builds and runs the real h9 against the fakes")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := runDemo(ctx, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []string{
		"alice: /h9 plan [repo=hello]", "@alice asked h9 to plan", "○ Add a greeting to README.md",
		"Plan ready for review", "[Approve & auto-run] [Approve & confirm each step] [Keep planning] [Cancel]",
		"alice clicks [Approve & auto-run]", "Now: bash: sleep 2", "✔ Add a greeting to README.md — edit_file README.md",
		"Done: 2/2 tasks", "[Open pull request]", "Opened the pull request", "/acme/hello/pull/1",
		"h9 follows PR #1 now", "PR #1: 1 review comment from @bob", "[Address feedback] [Ignore]",
		"alice clicks [Address feedback]", "Added the exclamation of joy.", "Answered on PR #1: 1 reply and a summary comment",
		"h9 wrote a reply to bob's comment: \"Addressed in ",
	}
	if strings.Contains(out.String()[strings.LastIndex(out.String(), "2/2 tasks ·"):], "[Stop]") {
		t.Errorf("the checklist's last version still has its Stop button:\n%s", out.String())
	}
	last := 0
	for _, w := range want {
		i := strings.Index(out.String()[last:], w)
		if i < 0 {
			t.Fatalf("after offset %d the demo's thread lacks %q:\n%s", last, w, out.String())
		}
		last += i
	}
}

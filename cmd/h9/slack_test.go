package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// A Slack h9 cannot reach at start stops it with one line after a
// bounded wait (exit 1), instead of retrying forever.
func TestSlackUnreachableAtStartStops(t *testing.T) {
	setEnv(t, "SLACK_API_URL", "http://127.0.0.1:1/", "H9_DATA_DIR", t.TempDir(), "H9_SANDBOX", "none")
	old := slackStartWait
	slackStartWait = 2 * time.Second
	t.Cleanup(func() { slackStartWait = old })
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	began := time.Now()
	err = run(t.Context(), cfg, &logs)
	if !errors.Is(err, errSlackUnreachable) {
		t.Fatalf("run = %v, want Slack unreachable; logs:\n%s", err, logs.String())
	}
	if took := time.Since(began); took > time.Minute {
		t.Errorf("stopping took %v", took)
	}
	var stderr bytes.Buffer
	if code := fail(&stderr, err); code != exitFailure || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "SLACK_API_URL=http://127.0.0.1:1/") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

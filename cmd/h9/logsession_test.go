package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A line that names a session gets its channel and thread, whether the
// session came through With or on the line itself; other lines are untouched.
func TestSessionLinesGetChannelAndThread(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "json", "debug", newScrubber())
	log.Info("agent run failed", "session", "T1/C9/1700.0001", "err", "boom")
	log.With("component", "agent").With("session", "T1/C9/1700.0002").Warn("compaction failed")
	log.With("session", "T1/C9/1700.0003", "channel", "C9", "thread", "1700.0003").Info("bot line")
	log.Info("no session here")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, line := range lines[:3] {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["channel"] != "C9" || !strings.HasPrefix(m["thread"].(string), "1700.000") {
			t.Errorf("line %d lacks channel/thread: %s", i, line)
		}
		if strings.Count(line, `"channel"`) != 1 {
			t.Errorf("line %d repeats channel: %s", i, line)
		}
	}
	if strings.Contains(lines[3], "channel") {
		t.Errorf("a line without a session got a channel: %s", lines[3])
	}
}

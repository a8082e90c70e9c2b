package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestLoggerRedactsSecrets(t *testing.T) {
	const bot, app, key = "xoxb-1234-secret", "xapp-1-A1-secret", "sk-proj-secret"
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log := newLogger(&buf, format, "info", newScrubber(bot, app, key))
			log.Info("token is "+bot, "app", app)
			log.Error("call failed", "err", errors.New(`Post "x?token=`+bot+`": eof`))
			log.With("session", "s1").WithGroup("req").Warn("retry", "auth", "Bearer "+key, "n", 3)
			out := buf.String()
			for _, s := range []string{bot, app, key} {
				if strings.Contains(out, s) {
					t.Errorf("log contains %q:\n%s", s, out)
				}
			}
			if got := strings.Count(out, redacted); got != 4 {
				t.Errorf("%d redactions, want 4:\n%s", got, out)
			}
			if !strings.Contains(out, "session") || !strings.Contains(out, "retry") {
				t.Errorf("ordinary attributes lost:\n%s", out)
			}
		})
	}
}

func TestLoggerFormatAndLevel(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "json", "warn", newScrubber())
	log.Info("hidden")
	log.Warn("shown", "channel", "C1")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line, got %q", buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["msg"] != "shown" || rec["channel"] != "C1" || rec["level"] != slog.LevelWarn.String() {
		t.Errorf("record = %v", rec)
	}
}

func TestScrubberIgnoresShortValues(t *testing.T) {
	// An empty OPENAI_API_KEY or a tiny one must not blank out every line.
	sc := newScrubber("", "abc")
	if got := sc.String("abc def"); got != "abc def" {
		t.Errorf("got %q", got)
	}
}

// H9_DATABASE_URL is a secret too: the whole URL and its password (in
// whatever error quotes it) never reach the log.
func TestLoggerRedactsTheDatabasePassword(t *testing.T) {
	const pw = "db-pa55word-secret"
	url := "postgres://h9:" + pw + "@db.internal:5432/h9?sslmode=require"
	var buf bytes.Buffer
	log := newLogger(&buf, "text", "info", secretsOf(Config{DatabaseURL: url}))
	log.Error("connecting", "url", url, "err", errors.New("failed: password="+pw+" rejected"))
	if out := buf.String(); strings.Contains(out, pw) || strings.Count(out, redacted) != 2 {
		t.Errorf("log = %s", out)
	}
}

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

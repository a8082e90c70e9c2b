package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/agent/store/storetest"
	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/jackc/pgx/v5"
)

// The conformance suite's Backend holds every storage method the agent and
// the bot declare, and the bbolt backend is one: a method added to either
// interface but not to the suite fails to compile here. Both backends are.
var (
	_ agent.Store       = storetest.Backend(nil)
	_ bot.Store         = storetest.Backend(nil)
	_ storetest.Backend = (*boltstore.Store)(nil)
	_ storetest.Backend = (*pgstore.Store)(nil)
	_ bot.Leases        = (*boltstore.Store)(nil)
	_ bot.Leases        = (*pgstore.Store)(nil)
)

func TestOpenDBSecondOpenFailsFast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := openDB(dir, dbLockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// flock is per open file, so a second open in this process contends like a second h9 would.
	_, err = openDB(dir, 50*time.Millisecond)
	if !errors.Is(err, ErrDataDirLocked) {
		t.Fatalf("err = %v, want ErrDataDirLocked", err)
	}
	want := "another h9 is already using " + dir + " (h9.db is locked)"
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := openDB(dir, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	db2.Close()
}

// withPassword puts a password in a test database's URL (the test server
// trusts loopback, so any password connects): doctor must never print it.
func withPassword(dsn, pw string) string {
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

const doctorDBPassword = "s3cret-doctor-db-pw"

// doctor on PostgreSQL: an empty database, then one h9 migrated, then one
// a newer h9 migrated, each told apart; the data directory line no longer
// speaks of h9.db's lock; the password is never printed.
func TestDoctorDatabase(t *testing.T) {
	doctorEnv(t)
	testenv.Need(t, "postgres")
	dsn := withPassword(pgtest.New(t), doctorDBPassword)
	t.Setenv("H9_DATABASE_URL", dsn)
	lines := doctorDBLines(t, nil)
	wantMark(t, lines, "database", "✓", "the database is empty", "creates schema")
	wantMark(t, lines, "data directory", "✓", "state is in PostgreSQL")

	st, err := pgstore.Open(t.Context(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	wantMark(t, doctorDBLines(t, nil), "database", "✓", "this h9's")

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "INSERT INTO h9_schema (version) VALUES ($1)", pgstore.CurrentSchema+1); err != nil {
		t.Fatal(err)
	}
	wantMark(t, doctorDBLines(t, ErrDoctorFailed), "database", "✗", "newer than this h9's", "hint: upgrade")
}

func TestDoctorDatabaseUnreachable(t *testing.T) {
	doctorEnv(t)
	t.Setenv("H9_DATABASE_URL", "postgres://h9:"+doctorDBPassword+"@127.0.0.1:1/h9?connect_timeout=2")
	wantMark(t, doctorDBLines(t, ErrDoctorFailed), "database", "✗", "hint: check H9_DATABASE_URL")
}

// doctorDBLines runs doctor expecting want (nil: success) and checks the
// database's password is nowhere in its output.
func doctorDBLines(t *testing.T, want error) map[string]string {
	t.Helper()
	lines, err := doctorLines(t)
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("doctor: err = %v, want %v", err, want)
	}
	for _, l := range lines {
		if strings.Contains(l, doctorDBPassword) {
			t.Errorf("doctor printed the database password: %q", l)
		}
	}
	return lines
}

// Each common first-hour mistake stops h9 with one line that names the
// setting and says what to do, exit 2 for a setting and 1 for an outage.
func TestStartupMistakes(t *testing.T) {
	slack := fakeslack.New(fakeslack.Options{BotToken: "xoxb-test", AppToken: "xapp-test"})
	t.Cleanup(slack.Close)
	reposFile := filepath.Join(t.TempDir(), "repos.yml")
	if err := os.WriteFile(reposFile, []byte("repos:\n  - name: api\n    repo: https://example.com/api.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  []string
		code int
		want []string
	}{
		{"bot token refused", []string{"SLACK_BOT_TOKEN=xoxb-wrong"}, exitConfig,
			[]string{"SLACK_BOT_TOKEN is not accepted by Slack (invalid_auth)", "OAuth & Permissions"}},
		{"app token refused", []string{"SLACK_APP_TOKEN=xapp-wrong"}, exitConfig,
			[]string{"SLACK_APP_TOKEN is not accepted by Slack (invalid_auth)", "connections:write"}},
		{"database down", []string{"H9_DATABASE_URL=postgres://h9:secret@127.0.0.1:1/h9"}, exitFailure,
			[]string{"H9_DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:1", "connection refused", "start it"}},
		{"repos file typo", []string{"H9_REPOS_FILE=" + reposFile}, exitConfig,
			[]string{"H9_REPOS_FILE", `line 3: unknown key "repo" (did you mean "url"?)`}},
		{"skills dir", []string{"H9_SKILLS_DIR=/nonexistent"}, exitConfig, []string{`H9_SKILLS_DIR="/nonexistent" is not a directory`}},
		{"template", []string{"H9_WORKSPACE_TEMPLATE=/nonexistent"}, exitConfig, []string{`H9_WORKSPACE_TEMPLATE="/nonexistent" is not a directory`}},
		{"data dir is a file", []string{"H9_DATA_DIR=" + reposFile}, exitConfig, []string{"H9_DATA_DIR", "is a file, not a directory"}},
		{"user names", []string{"H9_ALLOWED_USERS=alice,bob"}, exitConfig,
			[]string{`H9_ALLOWED_USERS: "alice" is not a Slack user ID`, "U012AB3CD", "Copy member ID"}},
		{"channel name", []string{"H9_ALLOWED_CHANNELS=#general"}, exitConfig,
			[]string{`H9_ALLOWED_CHANNELS: "#general" is not a Slack channel ID`, "C012AB3CD", "About"}},
		{"admin email", []string{"H9_ADMINS=alice@acme.com"}, exitConfig, []string{`H9_ADMINS: "alice@acme.com" is not a Slack user ID`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{
				"SLACK_BOT_TOKEN=xoxb-test", "SLACK_APP_TOKEN=xapp-test", "SLACK_API_URL=" + slack.APIURL(),
				"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "H9_DATA_DIR=" + filepath.Join(t.TempDir(), "data"), "H9_SANDBOX=none",
				"H9_LOG_LEVEL=error",
			}, c.env...)
			_, errOut, code := runH9(t, env)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "h9: ") {
				t.Errorf("last line %q is not h9's one-line error", last)
			}
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("last line %q lacks %q", last, w)
				}
			}
			if strings.Contains(errOut, "secret") {
				t.Errorf("the database password reached stderr: %s", errOut)
			}
		})
	}
}

// A port where another service answers (here an HTTP server's reply) is
// one line in plain words, a setting to fix (exit 2), not pgx's
// "invalid body length"; doctor says the same.
func TestDatabaseNotPostgres(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	t.Cleanup(func() { ln.Close(); served.Wait() })
	served.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Read(make([]byte, 512))
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	})
	dsn := "postgres://h9:pw@" + ln.Addr().String() + "/h9?sslmode=disable&connect_timeout=5"
	_, err = openStorage(t.Context(), Config{DatabaseURL: dsn, LeaseTTL: 15 * time.Second}, slog.New(slog.DiscardHandler), nil)
	want := "H9_DATABASE_URL: " + ln.Addr().String() + " does not answer as PostgreSQL (another service's port?): fix the URL's host and port"
	if !errors.Is(err, ErrInvalidSetting) || err.Error() != want {
		t.Errorf("openStorage: %v, want %q", err, want)
	}
	f := checkDatabase(t.Context(), Config{DatabaseURL: dsn})
	if f.verdict != verdictFail || !strings.Contains(f.detail, "does not answer as PostgreSQL") || strings.Contains(f.detail, "body length") {
		t.Errorf("doctor: %+v", f)
	}
}

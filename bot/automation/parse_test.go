package automation

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func testEnv() Env {
	return Env{
		Getenv: func(k string) (string, bool) {
			if k == "HOOK_SECRET" {
				return "s3cret", true
			}
			return "", false
		},
		Admins: true,
		Repos:  []string{"acme/api"},
		Now:    time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC),
	}
}

const goodFile = `automations:
  - name: deps
    channel: C0123ABCD
    owner: U0123ABCD
    repo: acme/api
    task: Bump the dependencies
    on:
      schedule: "0 9 * * 1"
    timezone: Europe/Paris
    budget: 200_000
    daily_budget: 1000000
  - name: alerts
    task: Look into the alert
    mode: run
    overlap: queue
    dedupe: 'alert (\w+)'
    on:
      message: {channel: C0ALERTS1, from: [B0BOT1234, U0PERSON1], match: "FIRING"}
  - name: deploy
    channel: C0123ABCD
    task: 'Deploy {{.service.name}} failed ({{.missing.deep.field}})'
    dedupe: '{{.id}}'
    on:
      webhook: {secret_env: HOOK_SECRET}
`

func TestParseGoodFile(t *testing.T) {
	t.Parallel()
	list, err := Parse(Source{File: "auto.yaml"}, []byte(goodFile), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("%d automations, want 3", len(list))
	}
	deps, alerts, deploy := list[0], list[1], list[2]
	if deps.Trigger.Kind != KindSchedule || deps.Zone.String() != "Europe/Paris" || deps.Budget != 200000 || deps.DailyBudget != 1000000 || deps.Mode != ModePlan || deps.Overlap != OverlapSkip {
		t.Errorf("deps: %+v", deps)
	}
	if deps.Line != 2 {
		t.Errorf("deps line %d, want 2", deps.Line)
	}
	if alerts.Channel != "C0ALERTS1" || alerts.Mode != ModeRun || alerts.Overlap != OverlapQueue || len(alerts.Trigger.From) != 2 {
		t.Errorf("alerts: %+v", alerts)
	}
	if deploy.Trigger.Kind != KindWebhook || string(deploy.secret) != "s3cret" {
		t.Errorf("deploy: %+v", deploy)
	}
	next := deps.Next(time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)) // a Monday, past 9:00 in Paris
	if want := time.Date(2026, 1, 12, 8, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("next %s, want %s", next, want)
	}
}

// YAML 1.1 reads a bare on as true; the file says on: and means it.
func TestParseOnKeyAsWritten(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"on", `"on"`, "'on'"} {
		src := "automations:\n  - name: a\n    channel: C0123ABCD\n    task: t\n    " + key + ":\n      schedule: \"0 9 * * *\"\n"
		list, err := Parse(Source{File: "f.yaml"}, []byte(src), testEnv())
		if err != nil || len(list) != 1 || list[0].Trigger.Kind != KindSchedule {
			t.Errorf("%s: %v %v", key, list, err)
		}
	}
}

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	head := "automations:\n  - name: a\n    channel: C0123ABCD\n    task: t\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown key", head + "    on: {schedule: \"0 9 * * *\"}\n    tz: UTC\n", []string{"line 6", `unknown key "tz" (did you mean "timezone"?)`}},
		{"typo", head + "    on: {schedule: \"0 9 * * *\"}\n    overlapp: skip\n", []string{"line 6", `did you mean "overlap"`}},
		{"trigger typo", head + "    on: {shedule: \"0 9 * * *\"}\n", []string{"line 5", `did you mean "schedule"`}},
		{"two triggers", head + "    on: {schedule: \"0 9 * * *\", webhook: {secret_env: HOOK_SECRET}}\n", []string{"line 5", "exactly one trigger"}},
		{"every second", head + "    on: {schedule: \"* * * * * *\"}\n", []string{"line 5", "five fields"}},
		{"every minute", head + "    on: {schedule: \"* * * * *\"}\n", []string{"line 5", "1m0s apart", "H9_AUTOMATION_MIN_INTERVAL is 1h0m0s"}},
		{"descriptor", head + "    on: {schedule: \"@every 1s\"}\n", []string{"five fields"}},
		{"never", head + "    on: {schedule: \"0 9 30 2 *\"}\n", []string{"never comes"}},
		{"zone", head + "    on: {schedule: \"0 9 * * *\"}\n    timezone: Mars/Olympus\n", []string{"line 6", "IANA"}},
		{"secret unset", head + "    on: {webhook: {secret_env: NOPE}}\n", []string{"line 5", "NOPE, which is not set"}},
		{"bad template", "automations:\n  - name: a\n    channel: C0123ABCD\n    task: '{{.a'\n    on: {webhook: {secret_env: HOOK_SECRET}}\n", []string{"line 4", "not a template"}},
		{"bad regexp", head + "    on: {message: {channel: C0123ABCD, from: [U0123ABCD], match: '(('}}\n", []string{"not a regular expression"}},
		{"repo unknown", head + "    repo: acme/web\n    on: {schedule: \"0 9 * * *\"}\n", []string{"line 5", "not a configured repository"}},
		{"issue no repo", head + "    on: {issue: {label: h9}}\n", []string{"needs repo"}},
		{"dup name", head + "    on: {schedule: \"0 9 * * *\"}\n" + head[13:] + "    on: {schedule: \"0 9 * * *\"}\n", []string{"line 6", "used by the entry at line 2"}},
		{"bad name", strings.Replace(head, "name: a", "name: Big_Name", 1) + "    on: {schedule: \"0 9 * * *\"}\n", []string{"line 2", "a-z, 0-9"}},
		{"not yaml", "automations: [\n", []string{"H9_AUTOMATIONS_FILE f.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(Source{File: "f.yaml"}, []byte(c.src), testEnv())
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("not ErrInvalid: %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("more than one line: %q", msg)
			}
			for _, w := range append(c.want, "f.yaml") {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestParseNoOwnerNoAdmins(t *testing.T) {
	t.Parallel()
	env := testEnv()
	env.Admins = false
	_, err := Parse(Source{File: "f.yaml"}, []byte("automations:\n  - name: a\n    channel: C0123ABCD\n    task: t\n    on: {schedule: \"0 9 * * *\"}\n"), env)
	if err == nil || !strings.Contains(err.Error(), "H9_ADMINS") {
		t.Fatalf("got %v", err)
	}
}

func TestParseRepoFile(t *testing.T) {
	t.Parallel()
	rf := RepoFile{Repo: "acme/api", Channels: []string{"C0123ABCD"}}
	src := "automations:\n  - name: nightly\n    channel: C0123ABCD\n    task: t\n    on: {webhook: {secret_env: UNSET_ONE}}\n"
	list, err := ParseRepoFile(rf, []byte(src), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Name != "acme/api/nightly" || list[0].Repo != "acme/api" || !strings.Contains(list[0].Broken, "UNSET_ONE") {
		t.Errorf("%+v", list[0])
	}
	_, err = ParseRepoFile(rf, []byte(strings.Replace(src, "C0123ABCD", "C0OTHER11", 1)), testEnv())
	if err == nil || !strings.Contains(err.Error(), "acme/api/.h9/automations.yaml") || !strings.Contains(err.Error(), "not one of acme/api's channels") {
		t.Errorf("got %v", err)
	}
}

func TestConfigFloors(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	if c.MinInterval != time.Hour || c.Refresh != 10*time.Minute || c.Check() != nil {
		t.Fatalf("%+v", c)
	}
	if err := (Config{MinInterval: time.Second, Refresh: time.Minute}).Check(); err == nil || !strings.Contains(err.Error(), "H9_AUTOMATION_MIN_INTERVAL") {
		t.Errorf("got %v", err)
	}
	if err := (Config{MinInterval: time.Minute, Refresh: time.Second}).Check(); err == nil || !strings.Contains(err.Error(), "H9_AUTOMATION_REFRESH") {
		t.Errorf("got %v", err)
	}
}

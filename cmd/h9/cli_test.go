package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestHelpListsEverySetting(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help", "help", "config"} {
		t.Run(arg, func(t *testing.T) {
			clearEnv(t)
			var out, errOut bytes.Buffer
			want := exitOK
			if arg == "config" {
				want = exitConfig // no tokens: printed, then refused as h9 would
			}
			if code := realMain([]string{arg}, &out, &errOut); code != want {
				t.Fatalf("exit %d, want %d; stderr %q", code, want, errOut.String())
			}
			checkUsage(t, out.String())
		})
	}
}

// checkUsage asserts one row per setting: its name, then its default (or "(required)"/"(empty)").
func checkUsage(t *testing.T, out string) {
	t.Helper()
	for _, s := range allSettings {
		def := s.def
		switch {
		case s.name == "SLACK_BOT_TOKEN" || s.name == "SLACK_APP_TOKEN":
			def = "(required)"
		case def == "":
			def = "(empty)"
		}
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.name) + ` +` + regexp.QuoteMeta(def) + ` +\S`)
		if !row.MatchString(out) {
			t.Errorf("no row %q with default %q in:\n%s", s.name, def, out)
		}
	}
	if rows := strings.Count(out, "\nH9_") + strings.Count(out, "\nSLACK_") + strings.Count(out, "\nOPENAI_"); rows != len(allSettings) {
		t.Errorf("%d setting rows, want %d: a setting is missing from the test table or the help", rows, len(allSettings))
	}
}

func TestCommandLineErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  bool // tokens set
		want string
	}{
		{"missing bot token", nil, false, "h9: SLACK_BOT_TOKEN is required (see h9 -h)\n"},
		{"unknown command", []string{"serve"}, true, "h9: unknown command \"serve\" (see h9 -h)\n"},
		{"extra argument", []string{"doctor", "now"}, true, "h9: unexpected argument \"now\" (see h9 -h)\n"},
		{"invalid sandbox", nil, true, "h9: H9_SANDBOX must be one of auto, bwrap, landlock, none (got \"docker\") (see h9 -h)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			if tt.env {
				setEnv(t, "H9_SANDBOX", "docker")
			}
			var out, errOut bytes.Buffer
			if code := realMain(tt.args, &out, &errOut); code != exitConfig {
				t.Errorf("exit %d, want %d", code, exitConfig)
			}
			if errOut.String() != tt.want {
				t.Errorf("stderr = %q, want %q", errOut.String(), tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
}

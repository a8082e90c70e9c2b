package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An invalid H9_AUTOMATIONS_FILE stops start-up with one line naming the
// file, the line and what is wrong; the settings' floors are checked.
func TestConfigAutomationsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "auto.yaml")
	os.WriteFile(bad, []byte("automations:\n  - name: a\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: t\n    on: {schedule: \"* * * * *\"}\n"), 0o600)
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("automations:\n  - name: a\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: t\n    trigger: {schedule: \"0 9 * * *\"}\n"), 0o600)
	for _, c := range []struct {
		cfg  AutomationConfig
		want string
	}{
		{AutomationConfig{AutomationsFile: bad, AutomationMinInterval: time.Hour, AutomationRefresh: time.Minute}, "auto.yaml: line 6: automation \"a\": schedule \"* * * * *\": two of its occurrences are 1m0s apart"},
		{AutomationConfig{AutomationsFile: typo, AutomationMinInterval: time.Hour, AutomationRefresh: time.Minute}, `typo.yaml: line 6: an automation: unknown key "trigger" (did you mean "on"?)`},
		{AutomationConfig{AutomationsFile: filepath.Join(dir, "none"), AutomationMinInterval: time.Hour, AutomationRefresh: time.Minute}, "H9_AUTOMATIONS_FILE: cannot read"},
		{AutomationConfig{AutomationMinInterval: time.Second, AutomationRefresh: time.Minute}, "H9_AUTOMATION_MIN_INTERVAL"},
		{AutomationConfig{AutomationMinInterval: time.Hour, AutomationRefresh: time.Second}, "H9_AUTOMATION_REFRESH"},
	} {
		cfg := Config{AutomationConfig: c.cfg}
		err := cfg.checkAutomations()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", c.cfg, err, c.want)
		}
	}
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte("automations:\n  - name: a\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: t\n    on: {schedule: \"0 9 * * *\"}\n"), 0o600)
	cfg := Config{AutomationConfig: AutomationConfig{AutomationsFile: ok, AutomationMinInterval: time.Hour, AutomationRefresh: time.Minute}}
	if err := cfg.checkAutomations(); err != nil {
		t.Error(err)
	}
}

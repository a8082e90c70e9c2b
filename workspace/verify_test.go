package workspace

import (
	"context"
	"os"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

var verifiedGuarantees = []string{
	"no capabilities, no_new_privs", "remount refused", "data directory and host paths invisible",
	"network unreachable", "h9's /proc unreachable", "HOME outside the workspace", "plan mode read-only",
	"every process reaped", "memory limit", "process limit", "file size limit", "/tmp limit",
}

// Verify reports every guarantee, and here (bwrap, Landlock, root with
// cgroups in CI) each one holds; what cannot hold by design is skipped with
// a reason, never passed.
func TestVerify(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			m := newManager(t, sb)
			checks := m.Verify(context.Background())
			byName := map[string]Check{}
			for _, c := range checks {
				t.Logf("%+v", c)
				byName[c.Name] = c
				if !c.OK && !c.Skipped {
					t.Errorf("%s failed: %s", c.Name, c.Detail)
				}
				if c.Detail == "" {
					t.Errorf("%s has no detail", c.Name)
				}
			}
			for _, g := range verifiedGuarantees {
				if _, ok := byName[g]; !ok {
					t.Errorf("no check for %q", g)
				}
			}
			// What must be verified follows from what this machine has.
			e := m.Enforcement()
			mustPass := []string{"every process reaped", "file size limit", "HOME outside the workspace"}
			switch {
			case sb == "bwrap":
				mustPass = append(mustPass, "no capabilities, no_new_privs", "remount refused",
					"data directory and host paths invisible", "network unreachable", "h9's /proc unreachable",
					"plan mode read-only", "/tmp limit")
			case e.Plan == GuardLandlock:
				mustPass = append(mustPass, "no capabilities, no_new_privs", "data directory and host paths invisible", "plan mode read-only")
			case os.Getenv("CI") != "":
				t.Errorf("CI without Landlock: %+v", e)
			}
			if e.Cgroups != "" {
				mustPass = append(mustPass, "memory limit", "process limit")
			}
			for _, g := range mustPass {
				if c := byName[g]; !c.OK {
					t.Errorf("%s not verified here: %s", g, c.Detail)
				}
			}
			if sb == "none" {
				if c := byName["/tmp limit"]; !c.Skipped {
					t.Errorf("/tmp limit without bwrap should be reported as not enforced: %+v", c)
				}
			}
		})
	}
}

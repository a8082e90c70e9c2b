package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// doctorCheckTimeout bounds each network check so a black-holed endpoint cannot hang doctor.
const doctorCheckTimeout = 15 * time.Second

type verdict int

const (
	verdictOK   verdict = iota
	verdictWarn         // works, but an operator should know (e.g. running unsandboxed)
	verdictFail
)

func (v verdict) mark() string {
	switch v {
	case verdictOK:
		return "✓"
	case verdictWarn:
		return "⚠"
	}
	return "✗"
}

// finding is the outcome of one check: what was found and, unless OK, what to do about it.
// More holds indented lines under it (the sandbox's guarantees, one each).
type finding struct {
	verdict verdict
	detail  string
	hint    string
	more    []string
}

func ok(format string, args ...any) finding {
	return finding{verdict: verdictOK, detail: fmt.Sprintf(format, args...)}
}

func failed(hint, format string, args ...any) finding {
	return finding{verdict: verdictFail, detail: fmt.Sprintf(format, args...), hint: hint}
}

func warned(hint, format string, args ...any) finding {
	return finding{verdict: verdictWarn, detail: fmt.Sprintf(format, args...), hint: hint}
}

type doctorCheck struct {
	name string
	run  func(ctx context.Context, cfg Config) finding
}

// doctorChecks run in order after the configuration loaded; each is independent of the others.
var doctorChecks = []doctorCheck{
	{"Slack bot token", checkBotToken},
	{"Slack app token", checkAppToken},
	{"Slack agent surfaces", checkSurfaces}, // doctor_slack.go
	{"model endpoint", checkModel},
	{"sandbox", checkSandbox},
	{"container", checkContainer}, // sandbox.go
	{"network", checkEgress},
	{"data directory", checkDataDir},
	{"health and metrics", checkHTTP},
	{"database", checkDatabase},
	{"repositories", checkRepos},
	{"automations", doctorAutomations}, // doctor_automations.go
	{"MCP servers", checkMCP},
}

// runDoctor prints one line per check and returns ErrDoctorFailed if any failed.
func runDoctor(ctx context.Context, w io.Writer) error {
	cfg, err := loadConfig()
	if err != nil {
		printFinding(w, scrubber{}, "configuration", failed("see h9 -h for every setting", "%v", err))
		return ErrDoctorFailed
	}
	sc := secretsOf(cfg)
	anyFailed := false
	report := func(name string, f finding) {
		printFinding(w, sc, name, f)
		anyFailed = anyFailed || f.verdict == verdictFail
	}
	report("configuration", checkConfig(cfg))
	for _, c := range doctorChecks {
		cctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
		report(c.name, c.run(cctx, cfg))
		cancel()
	}
	if anyFailed {
		return ErrDoctorFailed
	}
	return nil
}

// printFinding writes the check's single line; secrets are scrubbed from whatever a library said.
func printFinding(w io.Writer, sc scrubber, name string, f finding) {
	line := fmt.Sprintf("%s %s: %s", f.verdict.mark(), name, f.detail)
	if f.hint != "" {
		line += " — hint: " + f.hint
	}
	fmt.Fprintln(w, sc.String(line))
	for _, m := range f.more {
		fmt.Fprintln(w, sc.String("    "+m))
	}
}

// checkConfig reports what was loaded and that the optional directories exist.
func checkConfig(cfg Config) finding {
	for _, d := range []struct{ name, path string }{
		{"H9_WORKSPACE_TEMPLATE", cfg.WorkspaceTemplate},
		{"H9_SKILLS_DIR", cfg.SkillsDir},
	} {
		if d.path == "" {
			continue
		}
		if fi, err := os.Stat(d.path); err != nil || !fi.IsDir() {
			return failed("point it at an existing directory or unset it", "%s=%q is not a directory", d.name, d.path)
		}
	}
	return ok("model %s at %s, data in %s, sandbox %s", cfg.Model, cfg.OpenAIBaseURL, cfg.DataDir, cfg.Sandbox)
}

// checkDataDir proves the data directory is writable and h9.db is not held by a running h9.
func checkDataDir(_ context.Context, cfg Config) finding {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return failed("set H9_DATA_DIR to a directory h9 may write", "cannot create %s: %v", cfg.DataDir, err)
	}
	f, err := os.CreateTemp(cfg.DataDir, ".doctor-*")
	if err != nil {
		return failed("set H9_DATA_DIR to a directory h9 may write", "%s is not writable: %v", cfg.DataDir, err)
	}
	f.Close()
	os.Remove(f.Name())
	if cfg.DatabaseURL != "" {
		return ok("%s is writable (workspaces; state is in PostgreSQL)", cfg.DataDir)
	}
	db, err := openDB(cfg.DataDir, dbLockTimeout)
	if err != nil {
		return failed("stop the other h9 or give this one its own H9_DATA_DIR", "%v", err)
	}
	if err := db.Close(); err != nil {
		return failed("check the disk", "closing %s: %v", dbFile, err)
	}
	return ok("%s is writable and %s is not locked", cfg.DataDir, dbFile)
}

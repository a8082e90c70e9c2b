// Command h9 is a Slack app (Socket Mode) that runs a coding agent per Slack thread.
//
//	h9          run the bot
//	h9 doctor   check the configuration, tokens, model endpoint, sandbox and data directory
//	h9 config   print the settings in effect, secrets redacted
//	h9 version  print the version and VCS revision
//	h9 -h       list every setting with its default
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"
)

func main() {
	for _, step := range []func() error{hideSecrets, protectProcess} {
		if err := step(); err != nil {
			fmt.Fprintf(os.Stderr, "h9: %v\n", err)
			os.Exit(exitFailure)
		}
	}
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // something went wrong while running (or a doctor check failed)
	exitConfig  = 2 // bad command line or configuration: fix it and start again
)

// realMain is main without os.Exit, so tests can call it.
func realMain(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case len(args) > 1:
		return fail(stderr, lineErrorf(ErrUsage, "unexpected argument %q", args[1]))
	case cmd == "version":
		return fail(stderr, printVersion(stdout))
	case cmd == "config":
		return fail(stderr, printConfig(stdout))
	case cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help":
		if err := printUsage(stdout); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	case cmd != "" && cmd != "doctor":
		return fail(stderr, lineErrorf(ErrUsage, "unknown command %q", cmd))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, restore the default handling: a second Ctrl-C kills a stuck shutdown.
	go func() { <-ctx.Done(); stop() }()
	if cmd == "doctor" {
		// doctor reports configuration problems as a failed check, so it loads the config itself.
		return fail(stderr, runDoctor(ctx, stdout))
	}
	cfg, err := loadConfig()
	if err != nil {
		return fail(stderr, err)
	}
	dropSecretEnv() // the config holds them now; no child process inherits them
	return fail(stderr, run(ctx, cfg, stderr))
}

// fail prints err as one line and maps it to an exit code.
func fail(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, ErrDoctorFailed):
		return exitFailure // doctor already printed its findings
	case errors.Is(err, ErrMissingSetting), errors.Is(err, ErrInvalidSetting), errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "h9: %v (see h9 -h)\n", err)
		return exitConfig
	default:
		fmt.Fprintf(stderr, "h9: %v\n", err)
		return exitFailure
	}
}

const usageHeader = `h9 runs a coding agent per Slack thread (Slack Socket Mode).

Usage:
  h9          run the bot
  h9 doctor   check the configuration, Slack tokens, model endpoint, sandbox and data directory
  h9 config   print every setting's default and value in effect (secrets redacted)
  h9 version  print the version and the commit h9 was built from

Settings are read from the environment. SLACK_* and OPENAI_* may also be given with an H9_ prefix
(H9_SLACK_BOT_TOKEN wins over SLACK_BOT_TOKEN).

`

// usageTable is an envconfig.Usagef template: one row per setting, the unprefixed name where it has one.
const usageTable = "VARIABLE\tDEFAULT\tMEANING\n" +
	"{{range .}}{{if .Alt}}{{.Alt}}{{else}}{{usage_key .}}{{end}}\t" +
	"{{if usage_required .}}(required){{else if usage_default .}}{{usage_default .}}{{else}}(empty){{end}}\t" +
	"{{usage_description .}}\n{{end}}"

// printUsage writes the help text with every setting, its default and its meaning.
func printUsage(w io.Writer) error {
	if _, err := io.WriteString(w, usageHeader); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if err := envconfig.Usagef(envPrefix, &Config{}, tw, usageTable); err != nil {
		return err
	}
	return tw.Flush()
}

// printVersion is `h9 version`: the module's version and the commit it
// was built from, as the Go toolchain recorded them in the binary.
func printVersion(w io.Writer) error {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		_, err := fmt.Fprintln(w, "h9 (no build information: built without module support)")
		return err
	}
	line := "h9 " + info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		line += " commit " + rev
		if t := settings["vcs.time"]; t != "" {
			line += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			line += " with uncommitted changes"
		}
	}
	if settings["vcs.revision"] == "" {
		line += " (no commit recorded: build from a git checkout without -buildvcs=false)"
	}
	line += " " + info.GoVersion
	_, err := fmt.Fprintln(w, line)
	return err
}

package main

import (
	"io"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"
)

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

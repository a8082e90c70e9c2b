// Command h9 is a Slack app (Socket Mode) that runs a coding agent per Slack thread.
//
//	h9          run the bot
//	h9 doctor   check the configuration, tokens, model endpoint, sandbox and data directory
//	h9 config   print the settings in effect, secrets redacted
//	h9 version  print the version and VCS revision
//	h9 -h       list every setting with its default
package main

import (
	"fmt"
	"os"
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

package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

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

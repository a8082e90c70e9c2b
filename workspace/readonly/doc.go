// Package readonly is plan mode's read-only command checker: a pure
// function from a bash command line to nil or a refusal. It parses with a
// real shell parser (mvdan.cc/sh) and accepts only an allowlist of
// commands, arguments and redirections whose values are known before the
// command runs. It is a second layer behind the kernel's (bubblewrap's
// read-only bind, Landlock), and the only one where the kernel has neither;
// see ARCHITECTURE.md, "Sandbox layers".
package readonly

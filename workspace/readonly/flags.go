package readonly

import (
	"slices"
	"strings"
)

// argRule inspects a command's arguments (args[0] is the name) and returns
// why they are refused, or "".
type argRule func(args []string) string

func anyArgs([]string) string { return "" }

// hasFlag finds a forbidden option anywhere in args: a long one exact, with
// =value, or abbreviated (getopt_long takes any unambiguous prefix, so
// --out is --output), or a short letter inside a cluster such as -uo.
// "--" does not end the search: it may be the value of the option before
// it (sort -T -- -o out), and refusing a file named -o is cheap.
func hasFlag(args []string, short string, long ...string) string {
	for _, a := range args[1:] {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			for _, l := range long {
				if name != "" && strings.HasPrefix(strings.TrimPrefix(l, "--"), name) {
					return a
				}
			}
			continue
		}
		if short != "" && len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], short) {
			return a
		}
	}
	return ""
}

func forbidFlags(what, short string, long ...string) argRule {
	return func(args []string) string {
		if f := hasFlag(args, short, long...); f != "" {
			return what + " " + f
		}
		return ""
	}
}

func noArgs(why string) argRule {
	return func(args []string) string {
		if len(args) > 1 {
			return why
		}
		return ""
	}
}

// onlyArgs allows the command with no arguments or exactly one of ok.
func onlyArgs(what string, ok ...string) argRule {
	return func(args []string) string {
		if len(args) == 1 || (len(args) == 2 && slices.Contains(ok, args[1])) {
			return ""
		}
		return what + " is only allowed as: " + strings.Join(ok, ", ")
	}
}

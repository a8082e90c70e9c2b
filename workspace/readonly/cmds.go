package readonly

import (
	"regexp"
	"strings"
)

// readOnlyCommands are the programs plan mode may run without a sandbox.
// Each either cannot write at all or has a rule refusing the flags that do.
var readOnlyCommands = map[string]argRule{
	"ls": anyArgs, "cat": anyArgs, "head": anyArgs, "tail": anyArgs, "wc": anyArgs,
	"grep": anyArgs, "egrep": anyArgs, "fgrep": anyArgs, "stat": anyArgs,
	"pwd": anyArgs, "echo": anyArgs, "du": anyArgs, "df": anyArgs,
	"cut": anyArgs, "tr": anyArgs, "nl": anyArgs, "tac": anyArgs, "rev": anyArgs,
	"basename": anyArgs, "dirname": anyArgs, "realpath": anyArgs, "readlink": anyArgs,
	"diff": anyArgs, "cmp": anyArgs, "comm": anyArgs, "paste": anyArgs, "join": anyArgs,
	"column": anyArgs, "fold": anyArgs, "fmt": anyArgs, "expand": anyArgs, "unexpand": anyArgs,
	"od": anyArgs, "hexdump": anyArgs, "strings": anyArgs, "base64": anyArgs,
	"md5sum": anyArgs, "sha1sum": anyArgs, "sha256sum": anyArgs, "sha512sum": anyArgs, "cksum": anyArgs,
	"which": anyArgs, "type": anyArgs, "true": anyArgs, "false": anyArgs,
	"seq": anyArgs, "sleep": anyArgs, "id": anyArgs, "whoami": anyArgs,
	"uname": anyArgs, "nproc": anyArgs, "cd": anyArgs, "jq": anyArgs,
	"test":     testRule,
	"[":        testRule,
	"printf":   printfRule,
	"ps":       onlyArgs("ps", "-e", "-f", "-ef", "-eF", "-A", "aux", "ax"), // not BSD "e": other processes' environments
	"tree":     forbidFlags("tree writes files with", "oR", "--output"),
	"file":     forbidFlags("file writes a compiled magic file with", "C", "--compile"),
	"rg":       forbidFlags("rg runs a program with", "", "--pre", "--hostname-bin"),
	"sort":     forbidFlags("sort writes a file or runs a program with", "oT", "--output", "--compress-program", "--temporary-directory"),
	"find":     findRule,
	"uniq":     uniqRule,
	"sed":      sedRule,
	"git":      gitRule,
	"date":     dateRule,
	"env":      noArgs("env with arguments runs a program"),
	"hostname": noArgs("hostname with arguments changes the host name"),
	"command":  commandRule,
}

// checkArgs applies the allowlist to one simple command.
func checkArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	name := args[0]
	if strings.Contains(name, "/") {
		return "commands must be called by name, not by path"
	}
	rule, ok := readOnlyCommands[name]
	if !ok {
		return name + " is not on the read-only command list"
	}
	return rule(args)
}

var findActions = []string{"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

func findRule(args []string) string {
	for _, a := range args[1:] {
		for _, bad := range findActions {
			if a == bad {
				return "find " + bad + " can change files or run programs"
			}
		}
	}
	return ""
}

// uniq's second operand is an output file. After "--" every word is an
// operand, so "--" is refused rather than counted.
func uniqRule(args []string) string {
	operands := 0
	for _, a := range args[1:] {
		if a == "--" {
			return "uniq -- is not allowed (the words after it are operands, and the second one is written)"
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			operands++
		}
	}
	if operands > 1 {
		return "uniq with two file operands writes the second"
	}
	return ""
}

// dateRule refuses setting the clock: -s/--set (abbreviated too) or an
// operand that is not a +FORMAT. -I takes its value attached.
func dateRule(args []string) string {
	var rest []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-I") {
			rest = append(rest, a)
		}
	}
	if f := hasFlag(rest, "s", "--set"); f != "" {
		return "date " + f + " sets the clock"
	}
	for i := 1; i < len(rest); i++ {
		switch a := rest[i]; {
		case a == "-d" || a == "--date" || a == "-r" || a == "--reference" || a == "-f" || a == "--file":
			i++ // its value is read, not set
		case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+"):
			return "date with an operand sets the clock"
		}
	}
	return ""
}

// testRule refuses -v and -R: bash evaluates an array subscript in their
// operand, $(…) included (test -v 'a[$(rm -rf x)]').
func testRule(args []string) string {
	for _, a := range args[1:] {
		if a == "-v" || a == "-R" {
			return "test " + a + " evaluates its operand as shell code"
		}
	}
	return ""
}

// printfRule refuses -v: it assigns to any variable, an array subscript
// (evaluated, $(…) included) or an exported one such as PATH.
func printfRule(args []string) string {
	if len(args) > 1 && strings.HasPrefix(args[1], "-") && args[1] != "--" {
		return "printf " + args[1] + " is not allowed (-v assigns to a variable)"
	}
	return ""
}

func commandRule(args []string) string {
	if len(args) > 1 && (args[1] == "-v" || args[1] == "-V") {
		return ""
	}
	return "command runs other programs (only command -v is allowed)"
}

// Safe sed scripts: line ranges that print/delete/quit, and s/// whose flags
// cannot write (w) or execute (e).
var (
	sedPrint = regexp.MustCompile(`^(([0-9]+|\$)(,([0-9]+|\$))?)?[pdq=]$`)
	sedSubst = regexp.MustCompile(`^s(.)`)
)

func sedRule(args []string) string {
	if f := hasFlag(args, "i", "--in-place"); f != "" {
		return "sed " + f + " edits files in place"
	}
	var scripts []string
	sawScript := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
			sawScript = true
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
			sawScript = true
		case a == "-f" || strings.HasPrefix(a, "--file"):
			return "sed -f scripts are not allowed"
		case a == "-n" || a == "-E" || a == "-r" || a == "--quiet" || a == "--silent" || a == "--regexp-extended" || a == "-s" || a == "-z" || a == "-u":
		case strings.HasPrefix(a, "-") && a != "-":
			return "sed option " + a + " is not allowed"
		case !sawScript:
			scripts = append(scripts, a)
			sawScript = true
		}
	}
	for _, s := range scripts {
		for _, part := range strings.Split(s, ";") {
			if !safeSed(strings.TrimSpace(part)) {
				return "sed script " + s + " may write or run commands (only N,Mp / N,Md / s/a/b/g forms are allowed)"
			}
		}
	}
	return ""
}

func safeSed(s string) bool {
	if sedPrint.MatchString(s) {
		return true
	}
	m := sedSubst.FindStringSubmatch(s)
	if m == nil || m[1] == "\\" || m[1] == "\n" {
		return false
	}
	d := m[1]
	parts := splitUnescaped(s[1+len(d):], d)
	if len(parts) != 3 {
		return false
	}
	return strings.Trim(parts[2], "gpiI0123456789") == ""
}

// splitUnescaped splits on sep where it is not preceded by a backslash.
func splitUnescaped(s, sep string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], sep) {
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

package workspace

import "strings"

// gitReadOnly lists the git subcommands plan mode allows, with a rule for
// those that also have writing forms (branch, tag, stash, …).
var gitReadOnly = map[string]argRule{
	"status": anyArgs, "log": anyArgs, "show": anyArgs, "diff": anyArgs, "blame": anyArgs,
	"shortlog": anyArgs, "describe": anyArgs, "rev-parse": anyArgs, "ls-files": anyArgs,
	"ls-tree": anyArgs, "rev-list": anyArgs, "show-ref": anyArgs, "merge-base": anyArgs,
	"name-rev": anyArgs, "for-each-ref": anyArgs, "count-objects": anyArgs, "whatchanged": anyArgs,
	"version":  anyArgs,
	"grep":     forbidFlags("git grep runs a pager program with", "O", "--open-files-in-pager"),
	"cat-file": forbidFlags("git cat-file runs filter programs with", "", "--filters", "--textconv"),
	"branch":   listOnly("git branch", "arvlqi", "--list"),
	"tag":      listOnly("git tag", "lni", "--list"),
	"stash":    subcommands("git stash", false, "list", "show"), // bare `git stash` saves and resets
	"reflog":   subcommands("git reflog", true, "show"),
	"remote":   subcommands("git remote", true, "-v", "--verbose", "get-url"),
	"config":   gitConfigRule,
}

// gitGlobalOK are options allowed before the subcommand; -c and friends could
// point git at a program.
var gitGlobalOK = map[string]bool{"--no-pager": true, "-P": true, "--no-optional-locks": true, "--no-replace-objects": true}

func gitRule(args []string) string {
	i := 1
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if args[i] == "-C" && i+1 < len(args) {
			i++
			continue
		}
		if !gitGlobalOK[args[i]] {
			return "git option " + args[i] + " is not allowed"
		}
	}
	if i == len(args) {
		return ""
	}
	sub := args[i]
	rule, ok := gitReadOnly[sub]
	if !ok {
		return "git " + sub + " is not a read-only git command (allowed: status, log, diff, show, branch, grep, …)"
	}
	rest := args[i:]
	for _, a := range rest[1:] {
		if a == "--output" || strings.HasPrefix(a, "--output=") || a == "--ext-diff" {
			return "git " + a + " writes files or runs programs"
		}
	}
	return rule(rest)
}

// gitValueFlags take the next argument as their value.
var gitValueFlags = map[string]bool{
	"--contains": true, "--no-contains": true, "--merged": true, "--no-merged": true,
	"--points-at": true, "--format": true, "--sort": true,
}

// listOnly allows the listing form: flags from the allowed short letters or
// known long list options; operands only as patterns after -l/--list.
func listOnly(what, shortOK, listLong string) argRule {
	return func(args []string) string {
		listing := false
		var operands []string
		for i := 1; i < len(args); i++ {
			a := args[i]
			name, _, hasValue := strings.Cut(a, "=")
			switch {
			case gitValueFlags[name]:
				if !hasValue {
					i++
				}
			case a == listLong || a == "-l":
				listing = true
			case strings.HasPrefix(a, "--"):
				if !listLongOK(name) {
					return what + " " + a + " is not allowed (listing only)"
				}
			case strings.HasPrefix(a, "-") && len(a) > 1:
				if strings.Trim(a[1:], shortOK+"0123456789") != "" {
					return what + " " + a + " is not allowed (listing only)"
				}
				listing = listing || strings.Contains(a, "l")
			default:
				operands = append(operands, a)
			}
		}
		if len(operands) > 0 && !listing {
			return what + " " + operands[0] + " would create or change something (listing only)"
		}
		return ""
	}
}

func listLongOK(name string) bool {
	switch name {
	case "--all", "--remotes", "--verbose", "--show-current", "--column", "--no-column",
		"--color", "--no-color", "--abbrev", "--no-abbrev", "--ignore-case", "--quiet":
		return true
	}
	return false
}

func subcommands(what string, bareOK bool, ok ...string) argRule {
	return func(args []string) string {
		if len(args) == 1 {
			if bareOK {
				return ""
			}
			return what + " without a subcommand changes the working tree (allowed: " + strings.Join(ok, ", ") + ")"
		}
		for _, s := range ok {
			if args[1] == s {
				return ""
			}
		}
		return what + " " + args[1] + " is not allowed (allowed: " + strings.Join(ok, ", ") + ")"
	}
}

func gitConfigRule(args []string) string {
	reading := false
	for _, a := range args[1:] {
		switch a {
		case "--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list":
			reading = true
		case "--add", "--unset", "--unset-all", "--replace-all", "--edit", "-e",
			"--rename-section", "--remove-section", "set", "unset", "edit", "rename-section", "remove-section":
			return "git config " + a + " changes the configuration"
		}
	}
	if !reading {
		return "git config is only allowed with --get, --get-all, --get-regexp or --list"
	}
	return ""
}

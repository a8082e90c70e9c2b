package readonly

import (
	"slices"
	"strings"
)

// gitReadOnly lists the git subcommands plan mode allows, with a rule for
// those that also have writing forms (branch, tag, stash, …).
var gitReadOnly = map[string]argRule{
	"status": anyArgs, "log": anyArgs, "show": anyArgs, "diff": anyArgs, "blame": anyArgs,
	"shortlog": anyArgs, "rev-parse": anyArgs, "ls-files": anyArgs,
	"ls-tree": anyArgs, "rev-list": anyArgs, "show-ref": anyArgs, "merge-base": anyArgs,
	"name-rev": anyArgs, "for-each-ref": anyArgs, "count-objects": anyArgs, "whatchanged": anyArgs,
	"version":  anyArgs,
	"grep":     forbidFlags("git grep runs a program with", "O", "--open-files-in-pager", "--textconv"),
	"cat-file": forbidFlags("git cat-file runs filter programs with", "", "--filters", "--textconv"),
	"describe": forbidFlags("git describe refreshes the index (a write) with", "", "--dirty", "--broken"),
	"branch":   listOnly("git branch", "arvlqi", "--list"),
	"tag":      listOnly("git tag", "lni", "--list"),
	"stash":    subcommands("git stash", false, "list", "show"), // bare `git stash` saves and resets
	"reflog":   subcommands("git reflog", true, "show"),
	"remote":   gitRemoteRule,
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
	if f := hasFlag(rest, "", "--output", "--ext-diff"); f != "" {
		return "git " + f + " writes files or runs programs"
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

// gitRemoteRule allows listing remotes and reading a URL; every other form
// (add, rename, set-url, prune, -v add …) changes the configuration or
// reaches the network.
func gitRemoteRule(args []string) string {
	switch {
	case len(args) == 1, len(args) == 2 && (args[1] == "-v" || args[1] == "--verbose"):
		return ""
	case len(args) >= 3 && args[1] == "get-url":
		for _, a := range args[2:] {
			if strings.HasPrefix(a, "-") && a != "--push" && a != "--all" {
				return "git remote get-url " + a + " is not allowed"
			}
		}
		return ""
	}
	return "git remote is only allowed as: git remote, git remote -v, git remote get-url NAME"
}

var (
	// gitConfigModes read; exactly one is required.
	gitConfigModes = []string{"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"}
	// gitConfigModifiers change how values are read or shown, never where
	// from: --file and --blob (any file as configuration) are not here.
	gitConfigModifiers = []string{"--null", "-z", "--name-only", "--show-origin", "--show-scope",
		"--local", "--global", "--system", "--worktree", "--includes", "--no-includes",
		"--bool", "--int", "--bool-or-int", "--path", "--expiry-date", "--fixed-value"}
)

// gitConfigRule allows only reading forms, old (--get, --list) and new
// (git config get, git config list), with an allowlist of modifiers.
func gitConfigRule(args []string) string {
	modes := 0
	operands := args[1:]
	if len(operands) > 0 && (operands[0] == "get" || operands[0] == "list") {
		modes, operands = 1, operands[1:]
	}
	for _, a := range operands {
		switch {
		case slices.Contains(gitConfigModes, a):
			modes++
		case slices.Contains(gitConfigModifiers, a), strings.HasPrefix(a, "--type="), strings.HasPrefix(a, "--default="):
		case strings.HasPrefix(a, "-"):
			return "git config " + a + " is not allowed (reading only: --get, --get-all, --get-regexp, --list)"
		}
	}
	if modes != 1 {
		return "git config is only allowed with one of --get, --get-all, --get-regexp or --list"
	}
	return ""
}

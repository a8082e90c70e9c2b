package readonly

import (
	"errors"
	"strings"
	"testing"
)

// readOnlyAllowed must pass the checker: everyday reading in plan mode.
var readOnlyAllowed = []string{
	"ls -la && grep -r foo .",
	"ls",
	"cat go.mod | head -n 20",
	"find . -name '*.go' -type f -print",
	"find . -name '*.go' | sort | uniq -c",
	"grep -rn 'func main' . 2>/dev/null || true",
	"rg TODO --type go 2>&1 | head",
	"tree -L 2",
	"wc -l < main.go",
	"git status && git log --oneline -5 && git diff HEAD~1 -- main.go",
	"git branch -a",
	"git branch --list 'feat*'",
	"git show HEAD:README.md",
	"sed -n '10,20p' main.go",
	"sed 's/foo/bar/g' main.go",
	"echo hello; pwd",
	"stat main.go >/dev/null 2>&1",
	"du -sh . ; df -h",
	"cut -d: -f1 /etc/passwd | sort -u",
	"for f in a.go b.go; do wc -l \"$f\"; done",
	"if test -f go.mod; then cat go.mod; else echo none; fi",
	"(cd sub && ls)",
	"cat <<'EOF'\nhello\nEOF",
	"command -v go",
	"date +%s",
	"date -d '2020-01-01' +%s",
	"git -C sub log -1",
	"git stash list",
	"git remote -v",
	"git config --get user.name",
	"for f in ./*.go; do wc -l \"$f\"; done",
	"ls src/*.go ./*.md",
	"test -f go.mod && [ -d .git ]",
	"printf '%s\\n' a b",
	"printf -- '-x\\n'",
	"git show HEAD@{1}",
	"git remote get-url origin",
	"git config get user.name",
	"git describe --tags --always",
	"date -Iseconds",
	"ps aux",
	"cat /proc/cpuinfo /proc/self/status",
	"sort -k2 -n in | uniq -c",
	"for f in a b; do for g in c; do echo \"$f$g\"; done; done",
	"cat < /dev/null",
}

// readOnlyRefused must be refused, with the second column in the message.
var readOnlyRefused = map[string]string{
	"echo x > f":                           "\"> f\": redirection to a file",
	"echo x >> f":                          "redirection",
	"ls &> out.txt":                        "redirection",
	"rm -rf .":                             "rm",
	"sed -i s/a/b/ f":                      "in place",
	"sed -ni 's/a/b/p' f":                  "in place",
	"sed 's/a/b/w out' f":                  "may write",
	"sed -e '1e rm -rf /' f":               "may write",
	"$(curl x)":                            "command substitution",
	"echo `curl x`":                        "command substitution",
	"cat $(ls)":                            "command substitution",
	"cat <(ls)":                            "command substitution",
	"ls $HOME":                             "expansions",
	"for f in -delete; do find . $f; done": "'-'",
	"for f in a; do $f; done":              "not on the read-only command list",
	"for f in a; do ls ${f:-x}; done":      "expansions",
	"echo \"$SLACK_BOT_TOKEN\"":            "expansions",
	"X=1 git log":                          "assignments",
	"PAGER=rm git log":                     "assignments",
	"find . -delete":                       "-delete",
	"find . -exec rm {} \\;":               "-exec",
	"find . -execdir rm {} +":              "-execdir",
	"find . -fprint out":                   "-fprint",
	"find . -{delete,print}":               "brace",
	"sort -o out in":                       "sort",
	"sort --output=out in":                 "sort",
	"uniq in out":                          "uniq",
	"tree -o out":                          "tree",
	"rg --pre ./x foo":                     "--pre",
	"git commit -m x":                      "git commit",
	"git checkout .":                       "git checkout",
	"git branch new-feature":               "listing only",
	"git branch -D main":                   "listing only",
	"git tag v1":                           "listing only",
	"git stash":                            "",
	"git stash drop":                       "git stash drop",
	"git -c core.pager=rm log":             "git option -c",
	"git diff --output=x":                  "--output",
	"git config user.name x":               "git config",
	"./script.sh":                          "by path",
	"/bin/rm -rf x":                        "by path",
	"python3 -c 'print(1)'":                "python3",
	"xargs rm":                             "xargs",
	"env rm -rf .":                         "env",
	"ls & rm x":                            "background",
	"touch f":                              "touch",
	"mkdir d":                              "mkdir",
	"tee f < in":                           "tee",
	"cp a b":                               "cp",
	"f() { rm x; }; f":                     "construct",
	"declare -x A=1":                       "construct",
	"echo $((1+2))":                        "expansions",
	"echo ${x:=rm}":                        "expansions",
	"date -s 2020-01-01":                   "clock",
	"date 010100002020":                    "clock",
	"for f in *.go; do wc -l $f; done":     "glob must not start",
	"cat > f <<EOF\nx\nEOF":                "redirection",
	"cat <<EOF\n$(rm x)\nEOF":              "command substitution",
	"ls 3>f":                               "redirection",
	"echo x >&f":                           "redirection",
	"s\\ed -i s/a/b/ f":                    "in place",
	"sed -\\i s/a/b/ f":                    "in place",
	"ls; (rm x)":                           "rm",
	"true && { echo ok; rm -f x; }":        "rm",
	"if ( :x ); then :; fi":                ":x",
	"ls 'unterminated":                     "parsed",
}

func TestCheck(t *testing.T) {
	for _, cmd := range readOnlyAllowed {
		t.Run("allow "+cmd, func(t *testing.T) {
			if err := Check(cmd); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
	for cmd, part := range readOnlyRefused {
		t.Run("refuse "+cmd, func(t *testing.T) {
			err := Check(cmd)
			if !errors.Is(err, ErrReadOnly) {
				t.Fatalf("allowed (err=%v)", err)
			}
			if !strings.Contains(err.Error(), "plan mode is read-only") || !strings.Contains(err.Error(), part) {
				t.Errorf("message %q lacks %q", err, part)
			}
		})
	}
}

// bypassClasses hold a working example of every class of bypass found
// against the checker (most ran a program or wrote a file in plan mode
// before issue 12; the rest guard against regressions). The second column
// is part of the refusal.
var bypassClasses = []struct {
	class string
	cases map[string]string
}{
	{"$(…) evaluated in an array subscript", map[string]string{
		"test -v 'a[$(touch pwned)]'":      "test -v",
		"[ -v 'a[$(touch pwned)]' ]":       "test -v",
		"printf -v 'a[$(touch pwned)]' x":  "printf -v",
		"test -R 'a[$(touch pwned)]'":      "test -R",
		"true && test -v 'a[`touch pwn`]'": "test -v",
	}},
	{"printf -v rewriting exported variables", map[string]string{
		"printf -v PATH /tmp/evil; ls":                    "printf -v",
		"printf -v GIT_CONFIG_VALUE_0 'touch x'; git log": "printf -v",
		"printf -vPATH .":                                 "printf -vPATH",
	}},
	{"loop variables turning into options or other programs", map[string]string{
		"for f in o; do sort -$f out in; done":      "with -o",
		"for f in o; do sort \"-$f\" out in; done":  "with -o",
		"for f in 'x -o'; do sort $f out; done":     "blanks",
		"for PATH in .; do ls; done":                "lowercase",
		"for IFS in o; do sort -xIFSx out; done":    "lowercase",
		"for f in ''; do sort $f* ; done":           "empty",
		"for f in ./*; do sort -$f; done":           "word of its own",
		"for f in /proc/1/environ; do cat $f; done": "/proc",
	}},
	{"quoted brace expansion and globs turning into options", map[string]string{
		"find . -{\"delete\",print}":   "brace",
		"sort -{\"o\",x}out in":        "brace",
		"find . -{'delete',print}":     "brace",
		"sort * ":                      "glob must not start",
		"sort \"\"* ":                  "glob must not start",
		"find ?elete":                  "glob must not start",
		"sort [-]o":                    "glob must not start",
		"for f in *; do sort $f; done": "glob must not start",
	}},
	{"-- that is an option's value, and abbreviated long options", map[string]string{
		"sort -T -- -o out in":       "sort",
		"sort --out=x in":            "--out=x",
		"sort --outp x in":           "--outp",
		"sort --compress-prog=sh in": "--compress-prog",
		"uniq -- in -out":            "uniq --",
		"file --compi x":             "--compi",
		"date --se 2020-01-01":       "--se",
		"date -Rs 2020-01-01":        "-Rs",
		"sed -e -- -i s/a/b/ f":      "in place",
		"sed --in s/a/b/ f":          "in place",
		"tree -R -H . -o x":          "tree",
		"rg --hostname-bin=./x --hyperlink-format=default x": "--hostname-bin",
	}},
	{"git subcommands with writing forms", map[string]string{
		"git remote -v add x /tmp/y":                 "git remote is only allowed",
		"git remote add x y":                         "git remote is only allowed",
		"git remote set-url origin x":                "git remote is only allowed",
		"git config --file .git/config core.pager x": "--file",
		"git config -f x --get y":                    "-f",
		"git config --get x --unset-al":              "--unset-al",
		"git config core.pager x":                    "only allowed with one of",
		"git grep --open-files-in-pager=sh x":        "--open-files-in-pager",
		"git grep --open x":                          "--open",
		"git grep -Osh x":                            "-Osh",
		"git describe --dirty":                       "--dirty",
		"git describe --broken":                      "--broken",
		"git diff --outp=x":                          "--outp",
		"git log --ext":                              "--ext",
	}},
	{"/dev/tcp and device redirections", map[string]string{
		"cat < /dev/tcp/127.0.0.1/80":    "/dev/tcp",
		"echo x > /dev/tcp/127.0.0.1/80": "/dev/tcp",
		"cat 0</dev/udp/127.0.0.1/53":    "/dev/tcp",
		"cat < //dev/./tcp/127.0.0.1/80": "/dev/tcp",
		"head -c 100 /dev/sda":           "device",
	}},
	{"h9's and its parents' /proc", map[string]string{
		"cat /proc/1/environ":       "/proc",
		"od -j 4096 /proc/1234/mem": "/proc",
		"cat /proc/*/environ":       "/proc",
		"strings < /proc/1/environ": "/proc",
		"ps e":                      "ps is only allowed",
		"ps eww -A":                 "ps is only allowed",
	}},
}

func TestCheckBypasses(t *testing.T) {
	for _, cl := range bypassClasses {
		for cmd, part := range cl.cases {
			t.Run(cl.class+"/"+cmd, func(t *testing.T) {
				err := Check(cmd)
				if !errors.Is(err, ErrReadOnly) {
					t.Fatalf("allowed (err=%v)", err)
				}
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q lacks %q", err, part)
				}
			})
		}
	}
}

package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckReadOnly(t *testing.T) {
	allowed := []string{
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
		"for f in *.go; do wc -l $f; done",
	}
	refused := map[string]string{
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
	for _, cmd := range allowed {
		t.Run("allow "+cmd, func(t *testing.T) {
			if err := CheckReadOnly(cmd); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
	for cmd, part := range refused {
		t.Run("refuse "+cmd, func(t *testing.T) {
			err := CheckReadOnly(cmd)
			if !errors.Is(err, ErrReadOnly) {
				t.Fatalf("allowed (err=%v)", err)
			}
			if !strings.Contains(err.Error(), "plan mode is read-only") || !strings.Contains(err.Error(), part) {
				t.Errorf("message %q lacks %q", err, part)
			}
		})
	}
}

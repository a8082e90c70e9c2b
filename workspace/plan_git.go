package workspace

import "strings"

// In plan mode outside bwrap a command the checker accepts still runs git
// in the model's repository, whose configuration (the repository's own,
// the session home's ~/.gitconfig, the template's, anything they include)
// may name programs: an external diff, a textconv or clean filter, a gpg
// program, a pager. planGitGuard, run before the command in the same
// shell, lists every key git would read (git config --list runs nothing)
// and overrides each program-running one through GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n, which win over every file: no program the
// repository names runs. An empty value makes git fail where it would have
// run the program (diff.external: "cannot run"); cat keeps textconv and
// clean filters the identity.
const planGitGuard = `h9_git_guard() { local n=${GIT_CONFIG_COUNT:-0} k v; ` +
	`h9_set() { export "GIT_CONFIG_KEY_$n=$1" "GIT_CONFIG_VALUE_$n=$2"; n=$((n+1)); }; ` +
	`h9_set core.fsmonitor false; h9_set core.hooksPath /dev/null; h9_set core.pager cat; ` +
	`h9_set core.sshCommand false; h9_set core.gitProxy ''; h9_set core.askPass ''; h9_set core.editor false; ` +
	`h9_set sequence.editor false; h9_set core.alternateRefsCommand true; h9_set credential.helper ''; ` +
	`h9_set gpg.program false; h9_set diff.external ''; h9_set log.showSignature false; ` +
	`while IFS= read -r -d '' k; do case "${k,,}" in ` +
	`diff.*.textconv|filter.*.clean|filter.*.smudge) v=cat;; ` +
	`diff.*.command|filter.*.process|credential.*.helper|alias.*) v='';; ` +
	`gpg.*.program|gpg.ssh.defaultkeycommand|merge.*.driver|mergetool.*.cmd|difftool.*.cmd|` +
	`trailer.*.command|trailer.*.cmd|browser.*.cmd|man.*.cmd|man.*.path|pager.*) v=false;; ` +
	`*) continue;; esac; ` +
	`h9_set "$k" "$v"; done < <(git config --list --name-only -z 2>/dev/null); ` +
	`export GIT_CONFIG_COUNT=$n; unset -f h9_set; }; h9_git_guard; unset -f h9_git_guard; `

// guardPlanGit prefixes command with planGitGuard when it could run git:
// its text, quotes and backslashes aside, names git. Others keep their
// speed.
func guardPlanGit(command string) string {
	if !strings.Contains(strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(command), "git") {
		return command
	}
	return planGitGuard + "\n" + command
}

package workspace

import "os"

// defaultPath is used when the bot itself has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// passedThrough are the only variables of the bot's environment a command
// sees. Everything else (SLACK_BOT_TOKEN, OPENAI_API_KEY, …) stays out.
var passedThrough = []string{"LANG", "LC_ALL", "LC_CTYPE", "TZ"}

// commandEnv is the complete environment of a bash call. HOME is the
// session's own home directory, never the workspace: a repository's
// .gitconfig (or .bashrc, .npmrc) must not become the user's configuration.
func commandEnv(p place, tmp string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + p.home,
		"PWD=" + p.dir,
		"TMPDIR=" + tmp,
		"TERM=dumb",
		"NO_COLOR=1",
		"PAGER=cat",
		"GIT_PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
	}
	env = append(env, cacheVars(p.cache)...)
	hasLang := false
	for _, k := range passedThrough {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
			hasLang = hasLang || k == "LANG"
		}
	}
	if !hasLang {
		env = append(env, "LANG=C.UTF-8")
	}
	if p.readOnly {
		// git status would otherwise refresh .git/index, a repository's
		// core.fsmonitor would run a program, and log.showSignature one
		// more (gpg.program).
		env = append(env,
			"GIT_OPTIONAL_LOCKS=0",
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=core.fsmonitor",
			"GIT_CONFIG_VALUE_0=false",
			"GIT_CONFIG_KEY_1=log.showSignature",
			"GIT_CONFIG_VALUE_1=false",
		)
	}
	return env
}

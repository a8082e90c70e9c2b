package workspace

import "os"

// defaultPath is used when the bot itself has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// passedThrough are the only variables of the bot's environment a command
// sees. Everything else (SLACK_BOT_TOKEN, OPENAI_API_KEY, …) stays out.
var passedThrough = []string{"LANG", "LC_ALL", "LC_CTYPE", "TZ"}

// commandEnv is the complete environment of a bash call.
func commandEnv(dir string, readOnly bool) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + dir,
		"PWD=" + dir,
		"TMPDIR=/tmp",
		"TERM=dumb",
		"NO_COLOR=1",
		"PAGER=cat",
		"GIT_PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
	}
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
	if readOnly {
		// git status would otherwise refresh .git/index, and a repository's
		// core.fsmonitor would run a program.
		env = append(env,
			"GIT_OPTIONAL_LOCKS=0",
			"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=core.fsmonitor",
			"GIT_CONFIG_VALUE_0=false",
		)
	}
	return env
}

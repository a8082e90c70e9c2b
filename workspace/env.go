package workspace

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

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

// Secret is a value a repository's setup command gets (repo `secrets:`)
// and that no output of any command shows: it reads [REDACTED:Name].
type Secret struct{ Name, Value string }

// scrubSecrets replaces every secret's value, longest first (one value
// may contain another).
func scrubSecrets(s string, secrets []Secret) string {
	for _, sec := range secrets {
		if sec.Value != "" && strings.Contains(s, sec.Value) {
			s = strings.ReplaceAll(s, sec.Value, "[REDACTED:"+sec.Name+"]")
		}
	}
	return s
}

func sortSecrets(secrets []Secret) []Secret {
	out := slices.Clone(secrets)
	slices.SortFunc(out, func(a, b Secret) int { return len(b.Value) - len(a.Value) })
	return out
}

// setupEnv is what BashOptions.SetupEnv adds: only to a setup command.
func setupEnv(opts BashOptions) ([]string, error) {
	if len(opts.SetupEnv) == 0 {
		return nil, nil
	}
	if !opts.Network || opts.ReadOnly {
		return nil, fmt.Errorf("%w: secrets go to a repository's setup command only", ErrInvalidArgument)
	}
	var env []string
	for _, s := range opts.SetupEnv {
		env = append(env, s.Name+"="+s.Value)
	}
	return env, nil
}

// ScrubWriter writes what is written to it with every secret's value
// replaced, as command output shows it, across writes: it holds back the
// tail that could be the start of a value until more comes, or Flush.
type ScrubWriter struct {
	w       io.Writer
	secrets []Secret
	keep    int // longest value − 1
	tail    []byte
	found   map[string]bool
}

// NewScrubWriter scrubs secrets from what reaches w.
func NewScrubWriter(w io.Writer, secrets []Secret) *ScrubWriter {
	s := &ScrubWriter{w: w, secrets: sortSecrets(secrets)}
	for _, sec := range s.secrets {
		s.keep = max(s.keep, len(sec.Value)-1)
	}
	return s
}

func (s *ScrubWriter) Write(p []byte) (int, error) {
	data := string(s.tail) + string(p)
	for _, sec := range s.secrets {
		if sec.Value != "" && strings.Contains(data, sec.Value) {
			if s.found == nil {
				s.found = map[string]bool{}
			}
			s.found[sec.Name] = true
		}
	}
	data = scrubSecrets(data, s.secrets)
	cut := max(len(data)-s.keep, 0)
	s.tail = append(s.tail[:0], data[cut:]...)
	if _, err := io.WriteString(s.w, data[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Found names the secrets whose values went by, sorted.
func (s *ScrubWriter) Found() []string {
	var names []string
	for n := range s.found {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Flush writes what is held back.
func (s *ScrubWriter) Flush() error {
	_, err := s.w.Write(s.tail)
	s.tail = s.tail[:0]
	return err
}

package workspace

import (
	"fmt"
	"slices"
	"strings"
)

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

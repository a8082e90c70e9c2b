package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// gitRun is one of h9's own git commands: in a directory h9 owns (the
// cache, a session repository, a workspace it is creating), with the
// host's git configuration and credentials, never a workspace's.
type gitRun struct {
	dir    string     // working directory
	args   []string   // after "git" and the fixed options
	env    []string   // extra variables
	remote credential // the token's helper and pipe, for a remote's command
	stdin  io.Reader
	out    io.Writer // stdout; nil = captured and returned
}

// fixedOptions apply to every git h9 runs: no hooks, no fsmonitor, and
// nothing that waits for a human.
var fixedOptions = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "credential.interactive=false",
	"-c", "advice.detachedHead=false",
}

// passedGitEnv are the variables of h9's environment its git keeps: how to
// reach remotes (ssh, proxies, certificates). Every other GIT_* variable
// (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_INDEX_FILE…) could point git at
// something else and is dropped.
var passedGitEnv = []string{
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_PROXY_COMMAND",
	"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_CONFIG_NOSYSTEM",
}

// gitEnv is the environment of h9's git children.
func gitEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !slices.Contains(passedGitEnv, name) {
			continue
		}
		if name == "LC_ALL" || name == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	// git's messages are shown to users and parsed: keep them in English.
	env = append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	return append(env, extra...)
}

// gitTimeout bounds one of h9's own git commands, whatever its caller's
// deadline: a remote that stops answering mid-fetch (git has no timeout
// of its own over ssh) frees the session's actor and the repository's
// lock. A first clone of a large repository over a slow link is the
// longest honest command; it takes minutes, not half an hour.
const gitTimeout = 30 * time.Minute

// maxGitOutput bounds what h9 keeps of a git command's captured output.
const maxGitOutput = 64 << 20

// run runs git and returns its stdout (unless g.out takes it). A failure
// is ErrGit with git's last lines of stderr. The child has no terminal
// (its own session), so ssh cannot ask for a passphrase.
func (g gitRun) run(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, fixedOptions...), g.args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = g.dir, gitEnv(append(g.remote.env, g.env...)), g.stdin
	token, err := g.remote.pipe()
	if err != nil {
		return nil, err
	}
	if token != nil {
		defer token.Close()
		cmd.ExtraFiles = []*os.File{token} // tokenFD
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout bytes.Buffer
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &limitWriter{w: &stdout, n: maxGitOutput}, &stderr
	if g.out != nil {
		cmd.Stdout = g.out
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: git %s: %w", ErrGit, g.verb(), context.Cause(ctx))
		}
		return stdout.Bytes(), &gitError{verb: g.verb(), stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// out runs git and returns its stdout trimmed.
func (g gitRun) text(ctx context.Context) (string, error) {
	out, err := g.run(ctx)
	return strings.TrimSpace(string(out)), err
}

// verb is the git command run, past any -c options.
func (g gitRun) verb() string {
	for i := 0; i < len(g.args); i++ {
		if g.args[i] == "-c" {
			i++
			continue
		}
		return g.args[i]
	}
	return ""
}

// gitError is a failed git command; Error gives git's own words.
type gitError struct {
	verb, stderr string
	err          error
}

func (e *gitError) Error() string {
	words := strings.TrimSpace(e.stderr)
	if words == "" {
		words = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.verb, words)
}

func (e *gitError) Unwrap() []error { return []error{ErrGit, e.err} }

// tailBuffer keeps the last tailBytes written to it.
type tailBuffer struct{ b []byte }

const tailBytes = 8 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*tailBytes {
		t.b = append(t.b[:0], t.b[len(t.b)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return string(bytes.ToValidUTF8(b, nil))
}

// limitWriter stops storing after n bytes (and says so with an error, so
// the command fails rather than returning a cut answer).
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("%w: output larger than %d bytes", ErrGit, maxGitOutput)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

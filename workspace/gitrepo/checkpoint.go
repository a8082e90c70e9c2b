package gitrepo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/h9-app/h9/workspace"
)

// Commit is a checkpoint on a session branch.
type Commit struct {
	ID, Short      string // full and abbreviated commit id
	Added, Deleted int    // lines, since the previous checkpoint
	Files          int    // files changed, since the previous checkpoint
}

// bundleHeaders are the first lines a git bundle starts with: anything
// else (a "gitdir:" line above all) would make git read another repository.
var bundleHeaders = []string{"# v2 git bundle\n", "# v3 git bundle\n"}

// maxBundle bounds what h9 takes of a checkpoint's bundle.
const maxBundle = 4 << 30

// checkpointTimeout bounds the sandboxed commit (git add of a big tree).
const checkpointTimeout = 5 * time.Minute

// Checkpoint commits the workspace's changes on its checked-out branch, as
// author (with a Co-authored-by trailer for coauthor, when given), and
// brings the branch into the session's repository. The commit runs inside
// the sandbox like any of the model's commands (the workspace's .git is
// the model's); h9 takes only the bundle of new commits it writes, and
// checks its objects as it fetches them. It returns nil when the branch
// has not moved since the last checkpoint.
func (r *Repos) Checkpoint(ctx context.Context, ws *workspace.Workspace, s Session, subject string, coauthor *Identity) (*Commit, error) {
	_, own, unlock, err := r.sessionRepo(ctx, s)
	if err != nil {
		return nil, err
	}
	defer unlock()
	last, err := revParse(ctx, own, "refs/heads/"+s.Branch)
	if err != nil {
		return nil, fmt.Errorf("%w: session branch %s: %w", ErrWorkspace, s.Branch, err)
	}
	base, _ := revParse(ctx, own, baseRef)
	bundle, err := os.CreateTemp(own, "checkpoint-*.bundle")
	if err != nil {
		return nil, err
	}
	defer os.Remove(bundle.Name())
	defer bundle.Close()
	script := r.commitScript(commitMessage(subject, s.ID, coauthor), last, base)
	sink := &limitWriter{w: bundle, n: maxBundle}
	res, err := ws.Bash(ctx, script, workspace.BashOptions{Timeout: checkpointTimeout, Stdout: sink})
	if err != nil {
		return nil, fmt.Errorf("%w: running the checkpoint commit: %w", ErrGit, err)
	}
	kind, head := scriptResult(res.Output)
	if res.ExitCode != 0 || kind == "" || !isCommitID(head) {
		return nil, fmt.Errorf("%w: the checkpoint commit failed: %s", ErrGit, lastLines(res.String(), 10))
	}
	if head == last {
		return nil, nil
	}
	if kind == "bundle" {
		err = r.takeBundle(ctx, bundle, own, s.Branch)
	} else {
		err = r.moveBranch(ctx, own, s.Branch, head)
	}
	if err != nil {
		return nil, err
	}
	return r.commitAt(ctx, own, last, "refs/heads/"+s.Branch)
}

// Finish is Checkpoint outside a run (the session is done): it opens the
// session's workspace itself.
func (r *Repos) Finish(ctx context.Context, s Session, subject string, coauthor *Identity) (*Commit, error) {
	if _, err := r.checkSession(s); err != nil {
		return nil, err
	}
	ws, err := r.cfg.Workspaces.Open(s.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	defer ws.Close()
	return r.Checkpoint(ctx, ws, s, subject, coauthor)
}

// commitScript is the sandboxed part: stage everything, commit when
// something is staged (no hooks: the checkpoint is h9's), and write the
// commits the session's repository lacks as a bundle to its stdout, which
// h9 receives into a file of its own (everything else the script says goes
// to stderr). Its last line says which: "h9:known <id>" (nothing to fetch)
// or "h9:bundle <id>".
func (r *Repos) commitScript(message, last, base string) string {
	a := r.cfg.Author
	end := "H9_MESSAGE_" + randomHex(8)
	var b strings.Builder
	b.WriteString("exec 3>&1 1>&2\n")
	fmt.Fprintf(&b, "export GIT_AUTHOR_NAME=%s GIT_AUTHOR_EMAIL=%s GIT_COMMITTER_NAME=%s GIT_COMMITTER_EMAIL=%s\n",
		shellQuote(a.Name), shellQuote(a.Email), shellQuote(a.Name), shellQuote(a.Email))
	b.WriteString("g() { git -c core.hooksPath=/dev/null -c commit.gpgSign=false -c core.fsmonitor=false \"$@\" 3>&-; }\n")
	b.WriteString(stageScript)
	b.WriteString("if ! g diff --cached --quiet; then\n")
	fmt.Fprintf(&b, "g commit --quiet --no-verify --cleanup=verbatim --file=- <<'%s' || exit 4\n%s\n%s\nfi\n", end, message, end)
	b.WriteString("head=$(g rev-parse --verify --quiet 'HEAD^{commit}') || exit 5\n")
	fmt.Fprintf(&b, "if [ \"$head\" = %s ] || g merge-base --is-ancestor \"$head\" %s 2>/dev/null; then echo \"h9:known $head\"; exit 0; fi\n", last, last)
	b.WriteString("set --\n")
	for _, c := range []string{last, base} {
		if isCommitID(c) {
			fmt.Fprintf(&b, "g cat-file -e %s 2>/dev/null && set -- \"$@\" ^%s\n", c, c)
		}
	}
	b.WriteString("git -c core.hooksPath=/dev/null bundle create --quiet - HEAD \"$@\" >&3 3>&- || exit 6\necho \"h9:bundle $head\"\n")
	return b.String()
}

// takeBundle fetches the bundle the commit script wrote to h9's own file
// into the session branch, with its objects checked as from any untrusted
// remote. Nothing of the workspace is read here: the file is h9's, created
// in the session's repository, so no workspace file can name another
// repository in its place. It must be a bundle (git would read a "gitdir:"
// line as a repository to fetch from) whose prerequisites the session's
// repository has.
func (r *Repos) takeBundle(ctx context.Context, bundle *os.File, own, branch string) error {
	head := make([]byte, len(bundleHeaders[0]))
	if _, err := bundle.ReadAt(head, 0); err != nil || !slices.Contains(bundleHeaders, string(head)) {
		return fmt.Errorf("%w: the checkpoint's commit did not write a git bundle", ErrGit)
	}
	// GIT_DIR: the session's repository and nothing git could discover.
	// The fetch verifies the bundle (git bundle verify's check, in the same
	// process): its prerequisites must be in the session's repository.
	env := []string{"GIT_DIR=" + own}
	fetch := gitRun{dir: own, env: env, args: []string{"-c", "fetch.fsckObjects=true", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--", bundle.Name(), "+HEAD:refs/heads/" + branch}}
	if _, err := fetch.run(ctx); err != nil {
		return fmt.Errorf("taking the checkpoint into the session's repository: %w", err)
	}
	return nil
}

// moveBranch points the session branch at a commit the session's
// repository already has (the model went back in its history).
func (r *Repos) moveBranch(ctx context.Context, own, branch, id string) error {
	if _, err := revParse(ctx, own, id); err != nil {
		return fmt.Errorf("%w: the workspace's HEAD %s is not a commit of the session", ErrGit, id)
	}
	_, err := gitRun{dir: own, args: []string{"update-ref", "refs/heads/" + branch, id}}.run(ctx)
	return err
}

// commitAt describes the commit ref names, against the commit from.
func (r *Repos) commitAt(ctx context.Context, own, from, ref string) (*Commit, error) {
	id, err := revParse(ctx, own, ref)
	if err != nil {
		return nil, err
	}
	short, err := gitRun{dir: own, args: []string{"rev-parse", "--short", id}}.text(ctx)
	if err != nil {
		return nil, err
	}
	files, err := numstat(ctx, own, from, id)
	if err != nil {
		return nil, err
	}
	c := &Commit{ID: id, Short: short, Files: len(files)}
	for _, f := range files {
		c.Added, c.Deleted = c.Added+f.Added, c.Deleted+f.Deleted
	}
	return c, nil
}

// commitMessage is the todo as the subject (one line), then the trailers.
func commitMessage(subject, sessionID string, coauthor *Identity) string {
	subject = oneLine(subject, 200)
	if subject == "" {
		subject = "Checkpoint"
	}
	msg := subject + "\n\nH9-Session: " + oneLine(sessionID, 200)
	if coauthor != nil && coauthor.valid() {
		msg += "\nCo-authored-by: " + oneLine(coauthor.Name, 100) + " <" + oneLine(coauthor.Email, 200) + ">"
	}
	return msg
}

// oneLine folds whitespace and drops control characters, within n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// scriptResult reads the script's last "h9:" line.
func scriptResult(out string) (kind, id string) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "h9:"); ok {
			kind, id, _ = strings.Cut(rest, " ")
			if kind == "known" || kind == "bundle" {
				return kind, id
			}
			return "", ""
		}
	}
	return "", ""
}

func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lastLines is the end of s, at most n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// attachmentsDir is where h9 puts the files shared in a session's thread
// (ARCHITECTURE.md, "Files and images from the thread"). They are the
// user's material, not the session's changes: no checkpoint commits them,
// so no diff or pull request shows them.
const attachmentsDir = ".h9/attachments"

// stageScript is the checkpoint's staging, in the sandboxed script: every
// change but the attachments, even ones the model staged itself, and an
// exclude so that the model's own git status does not list them either.
// Whatever the add took of them is taken off the index again, so nothing
// in the workspace (the model may rewrite .git/info/exclude or add a
// .gitignore rule) can bring them in.
const stageScript = "mkdir -p .git/info 2>/dev/null && { grep -qxF '/" + attachmentsDir + "/' .git/info/exclude 2>/dev/null || echo '/" + attachmentsDir + "/' >> .git/info/exclude; }\n" +
	"g add --all . || exit 3\n" +
	"g rm -r --cached --quiet --ignore-unmatch -- " + attachmentsDir + " >/dev/null || exit 3\n"

package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/h9-app/h9/workspace"
)

// Pushed is a push's outcome.
type Pushed struct {
	Branch   string
	Commit   string // what the remote's branch is now
	UpToDate bool   // the remote had it already
}

// pushedRef remembers, in the session's repository, what h9 last pushed.
func pushedRef(branch string) string { return "refs/remotes/origin/" + branch }

// Push pushes the session branch to the repository's remote from the
// session's repository, with the host's git credentials (and the token's
// helper for GitHub over https). It overwrites the remote branch only
// where overwriting loses nothing (--force-with-lease, see lease): a
// session may rewrite its own history, and a branch merged and deleted
// comes back, but a commit someone else pushed to the branch is never
// lost; such a push is rejected, with git's reason.
func (r *Repos) Push(ctx context.Context, s Session) (Pushed, error) {
	repo, own, unlock, err := r.sessionRepo(ctx, s)
	if err != nil {
		return Pushed{}, err
	}
	defer unlock()
	head, err := revParse(ctx, own, "refs/heads/"+s.Branch)
	if err != nil {
		return Pushed{}, err
	}
	ref := "refs/heads/" + s.Branch
	if err := r.checkNoSecrets(ctx, own, ref); err != nil {
		return Pushed{}, err
	}
	expect, err := r.lease(ctx, repo, own, ref, head, s.Branch)
	if err != nil {
		return Pushed{}, err
	}
	push := gitRun{dir: own, remote: r.remote(repo), args: []string{"push", "--porcelain", "--force-with-lease=" + ref + ":" + expect,
		"--", repo.URL, ref + ":" + ref}}
	out, err := push.run(ctx)
	if err != nil {
		return Pushed{}, r.pushError(repo, string(out), err)
	}
	if _, err := (gitRun{dir: own, args: []string{"update-ref", pushedRef(s.Branch), head}}).run(ctx); err != nil {
		return Pushed{}, err
	}
	return Pushed{Branch: s.Branch, Commit: head, UpToDate: porcelainFlag(string(out)) == "="}, nil
}

// lease is what the remote's branch must be for the push to overwrite it:
// what it is now when overwriting loses nothing (the branch is gone, say
// merged and deleted, or it is where h9 left it, or behind the session's
// head), else where h9 last pushed it, so the push is refused.
func (r *Repos) lease(ctx context.Context, repo Repo, own, ref, head, branch string) (string, error) {
	pushed, _ := revParse(ctx, own, pushedRef(branch))
	out, err := gitRun{dir: own, remote: r.remote(repo), args: []string{"ls-remote", "--", repo.URL, ref}}.text(ctx)
	if err != nil {
		return "", fmt.Errorf("pushing to %s: %w", repo.Name, redactErr(err, repo, r.token(repo)))
	}
	current, _, _ := strings.Cut(out, "\t")
	switch {
	case current == "" || current == pushed:
		return current, nil
	case isCommitID(current):
		if _, err := (gitRun{dir: own, args: []string{"merge-base", "--is-ancestor", current, head}}).run(ctx); err == nil {
			return current, nil
		}
	}
	return pushed, nil
}

// pushError is ErrRejected with the remote's words when git reports the ref
// rejected, else the failure as it is (the remote could not be reached).
func (r *Repos) pushError(repo Repo, porcelain string, err error) error {
	var ge *gitError
	stderr := ""
	if errors.As(err, &ge) {
		stderr = ge.stderr
	}
	if porcelainFlag(porcelain) != "!" {
		return fmt.Errorf("pushing to %s: %w", repo.Name, redactErr(err, repo, r.token(repo)))
	}
	var why []string
	for _, line := range strings.Split(porcelain, "\n") {
		if strings.HasPrefix(line, "!") {
			if f := strings.SplitN(line, "\t", 3); len(f) == 3 {
				why = append(why, f[2])
			}
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "remote: ") && strings.TrimSpace(strings.TrimPrefix(line, "remote:")) != "" {
			why = append(why, line)
		}
	}
	words := redactErr(errors.New(strings.Join(why, "\n")), repo, r.token(repo)).Error()
	return fmt.Errorf("%w by %s: %s", ErrRejected, repo.Name, words)
}

// porcelainFlag is the flag of push --porcelain's ref line ("" if none).
func porcelainFlag(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 1 && line[1] == '\t' && strings.ContainsRune(" +-*!=", rune(line[0])) {
			return line[:1]
		}
	}
	return ""
}

// checkNoSecrets refuses a push whose commits hold a setup secret's value
// (an .npmrc setup wrote, committed with the session's work): h9 never
// sends a secret, to the forge no more than to Slack (ARCHITECTURE.md,
// "Network for the agent": secrets reach setup only). Every commit since
// the base is read, so a value added and removed again is found too.
func (r *Repos) checkNoSecrets(ctx context.Context, own, ref string) error {
	secrets := r.allSecrets()
	if len(secrets) == 0 {
		return nil
	}
	sw := workspace.NewScrubWriter(io.Discard, secrets)
	_, err := gitRun{dir: own, out: sw, args: []string{"log", "-p", "--no-ext-diff", "--no-textconv", "--no-color", "--format=%H%n%B",
		baseRef + ".." + ref, "--"}}.run(ctx)
	sw.Flush()
	if err != nil {
		return fmt.Errorf("checking the branch for setup secrets: %w", err)
	}
	if found := sw.Found(); len(found) > 0 {
		return fmt.Errorf("%w: its commits hold the value of %s (a file setup wrote, such as .npmrc?); "+
			"h9 does not push it: remove the file from the session's commits or keep it out of git (.gitignore)",
			ErrSecretInBranch, strings.Join(found, ", "))
	}
	return nil
}

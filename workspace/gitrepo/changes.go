package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/h9-app/h9/workspace"
)

// FileChange is one file of a diff.
type FileChange struct {
	Path           string // the new path (a rename's destination)
	From           string // a rename's source; "" otherwise
	Added, Deleted int    // lines; 0 and 0 with Binary
	Binary         bool
}

// Changes is what a session branch changes against its base commit.
type Changes struct {
	Commit         string // the branch's commit
	Files          []FileChange
	Added, Deleted int
}

// Changes is the session branch's diff stat against the commit it started
// from, computed in the session's repository.
func (r *Repos) Changes(ctx context.Context, s Session) (Changes, error) {
	_, own, unlock, err := r.sessionRepo(ctx, s)
	if err != nil {
		return Changes{}, err
	}
	defer unlock()
	head, err := revParse(ctx, own, "refs/heads/"+s.Branch)
	if err != nil {
		return Changes{}, err
	}
	base, err := revParse(ctx, own, baseRef)
	if err != nil {
		return Changes{}, err
	}
	files, err := numstat(ctx, own, base, head)
	if err != nil {
		return Changes{}, err
	}
	c := Changes{Commit: head, Files: files}
	for _, f := range files {
		c.Added, c.Deleted = c.Added+f.Added, c.Deleted+f.Deleted
	}
	return c, nil
}

// Diff writes the session branch's whole diff against its base commit
// (git diff's output) to w. External diff and textconv drivers stay off:
// the repository's .gitattributes must not choose programs for h9's git.
func (r *Repos) Diff(ctx context.Context, s Session, w io.Writer) error {
	_, own, unlock, err := r.sessionRepo(ctx, s)
	if err != nil {
		return err
	}
	defer unlock()
	// A file setup wrote may hold a secret: the diff goes to Slack.
	sw := workspace.NewScrubWriter(w, r.allSecrets())
	_, err = gitRun{dir: own, out: sw, args: []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "-M",
		baseRef, "refs/heads/" + s.Branch, "--"}}.run(ctx)
	if ferr := sw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// numstat lists the files changed from one commit to another.
func numstat(ctx context.Context, dir, from, to string) ([]FileChange, error) {
	out, err := gitRun{dir: dir, args: []string{"diff", "--no-ext-diff", "--no-textconv", "--numstat", "-z", "-M", from, to, "--"}}.run(ctx)
	if err != nil {
		return nil, err
	}
	return parseNumstat(out)
}

// parseNumstat reads `git diff --numstat -z`: "added\tdeleted\tpath\0", or
// for a rename "added\tdeleted\t\0from\0to\0"; binary files count "-".
func parseNumstat(out []byte) ([]FileChange, error) {
	var files []FileChange
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if len(rec) == 0 {
			continue
		}
		parts := bytes.SplitN(rec, []byte{'\t'}, 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("%w: unexpected numstat line %q", ErrGit, rec)
		}
		f := FileChange{Path: string(parts[2])}
		if f.Path == "" { // a rename: the paths follow
			if i+2 >= len(fields) {
				return nil, fmt.Errorf("%w: truncated numstat rename", ErrGit)
			}
			f.From, f.Path = string(fields[i+1]), string(fields[i+2])
			i += 2
		}
		if string(parts[0]) == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(string(parts[0]))
			f.Deleted, _ = strconv.Atoi(string(parts[1]))
		}
		files = append(files, f)
	}
	return files, nil
}

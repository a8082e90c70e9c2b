package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"
)

// statuses reads the combined status of sha: the newest status of each
// context; a failed or errored one is a failing check once, with the
// last lines of its Gitea Actions job's log where the server serves it
// (Gitea 1.26 and later), else its description, and its link.
func (p *gtPoll) statuses(ctx context.Context, sha string) error {
	_, err := p.statusesOf(ctx, sha)
	return err
}

// statusesOf is statuses of ref, a commit or a branch, and the commit
// the combined status is for: a branch's head, read with it.
func (p *gtPoll) statusesOf(ctx context.Context, ref string) (string, error) {
	combined, resp, err := p.c.GetCombinedStatus(p.g.owner, p.g.name, ref)
	if err != nil {
		return "", p.g.err("reading the commit's statuses", resp, err)
	}
	sha := combined.SHA
	if sha == "" { // no status: some Gitea versions then answer an empty combined status
		if sha, err = p.commitOf(ref); err != nil {
			return "", err
		}
	}
	p.cur.newHead(sha)
	p.cur.flag("found", "statuses", len(combined.Statuses) > 0)
	p.cur.flag("pending", "statuses", false)
	for _, st := range combined.Statuses {
		switch st.State {
		case sdk.StatusPending:
			p.cur.flag("pending", "statuses", true)
		case sdk.StatusFailure, sdk.StatusError:
			id := fmt.Sprintf("status:%d", st.ID)
			if p.cur.Seen[id] != "" {
				continue
			}
			ch := Check{ID: id, Name: st.Context, State: string(st.State), URL: st.TargetURL, Log: tail(st.Description, LogLines)}
			if err := p.jobLog(ctx, sha, &ch); err != nil {
				return "", err
			}
			p.cur.Seen[id] = "1"
			p.up.Failed = append(p.up.Failed, ch)
		}
	}
	return sha, nil
}

var commitIDRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// commitOf is the commit ref names: ref itself when it is a full commit
// id, else the branch's head.
func (p *gtPoll) commitOf(ref string) (string, error) {
	if commitIDRE.MatchString(ref) {
		return ref, nil
	}
	br, resp, err := p.c.GetRepoBranch(p.g.owner, p.g.name, ref)
	if err != nil {
		return "", p.g.err("reading the branch "+ref, resp, err)
	}
	if br.Commit == nil {
		return "", &Error{Kind: Gitea, Doing: "reading the branch " + ref, Words: "the branch has no commit"}
	}
	return br.Commit.ID, nil
}

// actionsJobRE is the target URL of a Gitea Actions job's status:
// …/actions/runs/{run number}/jobs/{job index in the run}.
var actionsJobRE = regexp.MustCompile(`/actions/runs/(\d+)/jobs/(\d+)/?$`)

// jobLog gives ch the job's name and the tail of its log when ch's link
// is a Gitea Actions job's, found through the runs of sha and the run's
// jobs; ch stays as it is when the status is no Actions job's or the
// server has no such API (before 1.26, Forgejo). Only a rate limit is an
// error: the poll is tried again later.
func (p *gtPoll) jobLog(ctx context.Context, sha string, ch *Check) error {
	m := actionsJobRE.FindStringSubmatch(ch.URL)
	if m == nil {
		return nil
	}
	number, _ := strconv.ParseInt(m[1], 10, 64)
	index, _ := strconv.Atoi(m[2])
	runs, resp, err := p.c.ListRepoActionRuns(p.g.owner, p.g.name, sdk.ListRepoActionRunsOptions{HeadSHA: sha, ListOptions: sdk.ListOptions{PageSize: giteaPage}})
	if err != nil {
		return p.onlyRateLimit("reading the commit's workflow runs", resp, err)
	}
	for _, run := range runs.WorkflowRuns {
		if run.RunNumber != number {
			continue
		}
		jobs, resp, err := p.c.ListRepoActionRunJobs(p.g.owner, p.g.name, run.ID, sdk.ListRepoActionJobsOptions{ListOptions: sdk.ListOptions{PageSize: giteaPage}})
		if err != nil || index >= len(jobs.Jobs) {
			return p.onlyRateLimit("reading the run's jobs", resp, err)
		}
		job := jobs.Jobs[index]
		log, err := p.logTail(ctx, job.ID)
		var rl *RateLimited
		if errors.As(err, &rl) {
			return err
		}
		if err == nil {
			ch.Name, ch.Log = job.Name, log
		}
		return nil
	}
	return nil
}

// onlyRateLimit is err as a RateLimited, or nil: a log h9 cannot read
// leaves the status's description in its place.
func (p *gtPoll) onlyRateLimit(doing string, resp *sdk.Response, err error) error {
	if err == nil {
		return nil
	}
	var rl *RateLimited
	if e := p.g.err(doing, resp, err); errors.As(e, &rl) {
		return e
	}
	return nil
}

// logTail streams job's log (GET …/actions/jobs/{id}/logs) through a
// tailWriter: a CI log of any size is read through, never held whole.
func (p *gtPoll) logTail(ctx context.Context, job int64) (string, error) {
	u := fmt.Sprintf("%srepos/%s/%s/actions/jobs/%d/logs", p.g.p.API, url.PathEscape(p.g.owner), url.PathEscape(p.g.name), job)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "token "+p.g.token)
	resp, err := p.hc.Do(req)
	if err != nil {
		return "", &Error{Kind: Gitea, Doing: "reading the job's log", Words: scrub(err.Error(), p.g.token)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if until, ok := retryAfter(resp.Header, resp.StatusCode, p.g.now()); ok {
			return "", &RateLimited{Kind: Gitea, Until: until}
		}
		return "", &Error{Kind: Gitea, Doing: "reading the job's log", Status: resp.StatusCode, Words: http.StatusText(resp.StatusCode)}
	}
	tw := newTailWriter(LogLines)
	if _, err := io.Copy(tw, resp.Body); err != nil {
		return "", &Error{Kind: Gitea, Doing: "reading the job's log", Words: scrub(err.Error(), p.g.token)}
	}
	return tw.String(), nil
}

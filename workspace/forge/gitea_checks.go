package forge

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"
)

// statuses reads the combined status of sha: the newest status of each
// context; a failed or errored one is a failing check once, with the
// last lines of its Gitea Actions job's log where the server serves it
// (Gitea 1.26 and later), else its description, and its link.
func (p *gtPoll) statuses(sha string) error {
	combined, resp, err := p.c.GetCombinedStatus(p.g.owner, p.g.name, sha)
	if err != nil {
		return p.g.err("reading the commit's statuses", resp, err)
	}
	delete(p.cur.Seen, "pending")
	for _, st := range combined.Statuses {
		switch st.State {
		case sdk.StatusPending:
			p.cur.Seen["pending"] = "statuses"
		case sdk.StatusFailure, sdk.StatusError:
			id := fmt.Sprintf("status:%d", st.ID)
			if p.cur.Seen[id] != "" {
				continue
			}
			ch := Check{ID: id, Name: st.Context, State: string(st.State), URL: st.TargetURL, Log: tail(st.Description, LogLines)}
			if err := p.jobLog(sha, &ch); err != nil {
				return err
			}
			p.cur.Seen[id] = "1"
			p.up.Failed = append(p.up.Failed, ch)
		}
	}
	return nil
}

// actionsJobRE is the target URL of a Gitea Actions job's status:
// …/actions/runs/{run number}/jobs/{job index in the run}.
var actionsJobRE = regexp.MustCompile(`/actions/runs/(\d+)/jobs/(\d+)/?$`)

// jobLog gives ch the job's name and the tail of its log when ch's link
// is a Gitea Actions job's, found through the runs of sha and the run's
// jobs; ch stays as it is when the status is no Actions job's or the
// server has no such API (before 1.26, Forgejo). Only a rate limit is an
// error: the poll is tried again later.
func (p *gtPoll) jobLog(sha string, ch *Check) error {
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
		log, resp, err := p.c.GetRepoActionJobLogs(p.g.owner, p.g.name, job.ID)
		if err != nil {
			return p.onlyRateLimit("reading the job's log", resp, err)
		}
		ch.Name, ch.Log = job.Name, tail(string(log), LogLines)
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

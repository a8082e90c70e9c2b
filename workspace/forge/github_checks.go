package forge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/go-github/v75/github"
)

func (p *ghPoll) reviews(ctx context.Context) error {
	var found []*github.PullRequestReview
	err := p.pages(ctx, "review", fmt.Sprintf("repos/%s/%s/pulls/%d/reviews", p.g.owner, p.g.name, p.number), func() (any, func()) {
		var page []*github.PullRequestReview
		return &page, func() { found = append(found, page...) }
	})
	if err != nil {
		return err
	}
	for _, r := range found {
		state := r.GetState()
		if state == "PENDING" || state != "CHANGES_REQUESTED" && strings.TrimSpace(r.GetBody()) == "" {
			continue // a bare approval or comment review says nothing to address
		}
		if !p.cur.newer("review", r.GetID()) {
			continue
		}
		f := Feedback{ID: strconv.FormatInt(r.GetID(), 10), Kind: Review, Author: r.GetUser().GetLogin(), Body: r.GetBody(),
			URL: r.GetHTMLURL(), Created: r.GetSubmittedAt().Time, Thread: strconv.FormatInt(r.GetID(), 10)}
		if err := p.add(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

func (p *ghPoll) conversation(ctx context.Context) error {
	var found []*github.IssueComment
	err := p.pages(ctx, "conversation", fmt.Sprintf("repos/%s/%s/issues/%d/comments", p.g.owner, p.g.name, p.number), func() (any, func()) {
		var page []*github.IssueComment
		return &page, func() { found = append(found, page...) }
	})
	if err != nil {
		return err
	}
	for _, c := range found {
		if !p.cur.newer("conversation", c.GetID()) {
			continue
		}
		f := Feedback{ID: strconv.FormatInt(c.GetID(), 10), Kind: Conversation, Author: c.GetUser().GetLogin(), Body: c.GetBody(),
			URL: c.GetHTMLURL(), Created: c.GetCreatedAt().Time, Thread: strconv.FormatInt(c.GetID(), 10)}
		if err := p.add(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// failedConclusions are the check run conclusions that mean "fix me".
var failedConclusions = map[string]bool{"failure": true, "timed_out": true, "action_required": true, "startup_failure": true}

// checks reads the check runs on sha; a failed GitHub Actions job brings
// the last lines of its log.
func (p *ghPoll) checks(ctx context.Context, sha string) error {
	var runs github.ListCheckRunsResults
	fresh, _, err := p.get(ctx, fmt.Sprintf("repos/%s/%s/commits/%s/check-runs?per_page=%d", p.g.owner, p.g.name, sha, perPage), &runs)
	if err != nil || !fresh {
		return err
	}
	p.cur.flag("found", "checks", len(runs.CheckRuns) > 0)
	p.cur.flag("pending", "checks", false)
	for _, run := range runs.CheckRuns {
		if run.GetStatus() != "completed" {
			p.cur.flag("pending", "checks", true)
		}
		if !failedConclusions[run.GetConclusion()] || !p.cur.once("check:"+strconv.FormatInt(run.GetID(), 10)) {
			continue
		}
		c := Check{ID: "check-run/" + strconv.FormatInt(run.GetID(), 10), Name: run.GetName(), State: run.GetConclusion(), URL: run.GetHTMLURL()}
		if c.URL == "" {
			c.URL = run.GetDetailsURL()
		}
		if run.GetApp().GetSlug() == "github-actions" {
			c.Log = p.jobLog(ctx, run.GetID())
		}
		if c.Log == "" {
			c.Log = strings.TrimSpace(run.GetOutput().GetTitle() + "\n" + run.GetOutput().GetSummary())
		}
		p.up.Failed = append(p.up.Failed, c)
	}
	return nil
}

// jobLog is the tail of an Actions job's log, "" when it is not served
// (expired, no right): the check's summary stands in.
func (p *ghPoll) jobLog(ctx context.Context, id int64) string {
	u, _, err := p.g.gh.Actions.GetWorkflowJobLogs(ctx, p.g.owner, p.g.name, id, 0)
	p.up.Requests++
	if err != nil || u == nil {
		return ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return ""
	}
	resp, err := p.g.hc.Do(req) // a signed URL: no token goes with it
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	tw := newTailWriter(LogLines) // read through, never held whole
	io.Copy(tw, resp.Body)
	return tail(tw.String(), LogLines)
}

// statuses reads the commit statuses on sha: the newest per context,
// failed or errored.
func (p *ghPoll) statuses(ctx context.Context, sha string) error {
	var list []*github.RepoStatus
	fresh, _, err := p.get(ctx, fmt.Sprintf("repos/%s/%s/commits/%s/statuses?per_page=%d", p.g.owner, p.g.name, sha, perPage), &list)
	if err != nil || !fresh {
		return err
	}
	latest := map[string]bool{}
	p.cur.flag("found", "statuses", len(list) > 0)
	p.cur.flag("pending", "statuses", false)
	for _, s := range list { // newest first
		if latest[s.GetContext()] {
			continue
		}
		latest[s.GetContext()] = true
		if s.GetState() == "pending" {
			p.cur.flag("pending", "statuses", true)
		}
		if (s.GetState() != "failure" && s.GetState() != "error") || !p.cur.once("status:"+strconv.FormatInt(s.GetID(), 10)) {
			continue
		}
		p.up.Failed = append(p.up.Failed, Check{ID: "status/" + strconv.FormatInt(s.GetID(), 10), Name: s.GetContext(),
			State: s.GetState(), URL: s.GetTargetURL(), Log: s.GetDescription()})
	}
	return nil
}

package forge

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// pipeline gives the failed jobs of the merge request's head pipeline,
// when that pipeline ran for headSHA (the commit h9 pushed), each once with
// the tail of its trace. A pipeline already read in its present status
// costs nothing: the merge request carries head_pipeline.
func (p *glPoll) pipeline(ctx context.Context, headSHA string) error {
	pl := p.mr.HeadPipeline
	if headSHA == "" {
		headSHA = p.mr.SHA
	}
	// A merged results pipeline runs on a merge commit of the head and
	// the target (ref refs/merge-requests/<iid>/merge): it is the head's
	// while the merge request's head is.
	mergedResults := pl != nil && strings.HasPrefix(pl.Ref, fmt.Sprintf("refs/merge-requests/%d/", p.number)) && p.mr.SHA == headSHA
	if pl == nil || pl.SHA != headSHA && !mergedResults {
		return nil
	}
	key := fmt.Sprintf("%d:%s", pl.ID, pl.Status)
	if p.cur.Seen["pipeline"] == key {
		return nil
	}
	if pl.Status == "failed" {
		if err := p.failedJobs(ctx, pl); err != nil {
			return err
		}
	}
	p.cur.Seen["pipeline"] = key
	return nil
}

// failedJobs gives each failed job not allowed to fail; a pipeline that
// failed with none (a downstream pipeline failed it, or its
// configuration) is one check itself, so the failure is never silent.
func (p *glPoll) failedJobs(ctx context.Context, pl *gitlab.Pipeline) error {
	var jobs []*gitlab.Job
	err := p.call(ctx, "reading the pipeline's failed jobs", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		jobs, resp, err = p.g.gl.Jobs.ListPipelineJobs(p.g.p.Path, pl.ID, &gitlab.ListJobsOptions{
			Scope: &[]gitlab.BuildStateValue{gitlab.Failed}, ListOptions: gitlab.ListOptions{PerPage: perPage}}, o)
		return resp, err
	})
	if err != nil {
		return err
	}
	counted := false
	for _, job := range jobs {
		if job.Status != "failed" || job.AllowFailure {
			continue
		}
		if counted = true; !p.cur.once("job:" + strconv.FormatInt(job.ID, 10)) {
			continue
		}
		c := Check{ID: "job/" + strconv.FormatInt(job.ID, 10), Name: job.Name, State: "failed", URL: job.WebURL}
		if job.FailureReason != "" {
			c.State = job.FailureReason // script_failure, job_execution_timeout, …
		}
		log, err := p.trace(ctx, job.ID)
		if err != nil {
			return err
		}
		if log == "" {
			log = fmt.Sprintf("%s failed in stage %s (%s); GitLab served no log", job.Name, job.Stage, c.State)
		}
		c.Log = log
		p.up.Failed = append(p.up.Failed, c)
	}
	if !counted && p.cur.once("pipeline:"+strconv.FormatInt(pl.ID, 10)) {
		log := "GitLab lists no failed job in it: a downstream pipeline or the CI configuration failed it"
		if pl.YamlErrors != "" {
			log = "the CI configuration is invalid: " + pl.YamlErrors
		}
		p.up.Failed = append(p.up.Failed, Check{ID: "pipeline/" + strconv.FormatInt(pl.ID, 10), Name: "pipeline", State: "failed", URL: pl.WebURL, Log: log})
	}
	return nil
}

// trace is the tail of a job's log without terminal colours and GitLab's
// section markers, read through a tailWriter (a trace can be hundreds of
// megabytes); "" when GitLab does not serve it (erased, no right). Only
// a rate limit is an error.
func (p *glPoll) trace(ctx context.Context, job int64) (string, error) {
	tw := newTailWriter(LogLines)
	err := p.call(ctx, "reading a job's log", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
		req, err := p.g.gl.NewRequest(http.MethodGet, fmt.Sprintf("projects/%s/jobs/%d/trace", gitlab.PathEscape(p.g.p.Path), job), nil, []gitlab.RequestOptionFunc{o})
		if err != nil {
			return nil, err
		}
		return p.g.gl.Do(req, tw)
	})
	if _, limited := err.(*RateLimited); limited {
		return "", err
	}
	if err != nil {
		return "", nil
	}
	return tail(cleanTrace(tw.String()), LogLines), nil
}

var (
	ansiRE    = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
	sectionRE = regexp.MustCompile(`section_(start|end):[0-9]+:[A-Za-z0-9_.\-\[\]=,]+\r?`)
)

func cleanTrace(s string) string {
	s = sectionRE.ReplaceAllString(ansiRE.ReplaceAllString(s, ""), "")
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines { // a carriage return redraws the line: keep what was drawn last
		if j := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); j >= 0 {
			lines[i] = l[j+1:]
		}
	}
	return strings.Join(lines, "\n")
}

package forge

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// pipeline gives the failed jobs of the merge request's head pipeline,
// when that pipeline ran on headSHA (the commit h9 pushed), each once with
// the tail of its trace. A pipeline already read in its present status
// costs nothing: the merge request carries head_pipeline.
func (p *glPoll) pipeline(ctx context.Context, headSHA string) error {
	pl := p.mr.HeadPipeline
	if headSHA == "" {
		headSHA = p.mr.SHA
	}
	if pl == nil || pl.SHA != headSHA {
		return nil
	}
	key := fmt.Sprintf("%d:%s", pl.ID, pl.Status)
	if p.cur.Seen["pipeline"] == key {
		return nil
	}
	if pl.Status == "failed" {
		if err := p.failedJobs(ctx, pl.ID); err != nil {
			return err
		}
	}
	p.cur.Seen["pipeline"] = key
	return nil
}

func (p *glPoll) failedJobs(ctx context.Context, pipeline int64) error {
	var jobs []*gitlab.Job
	err := p.call(ctx, "reading the pipeline's failed jobs", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		jobs, resp, err = p.g.gl.Jobs.ListPipelineJobs(p.g.p.Path, pipeline, &gitlab.ListJobsOptions{
			Scope: &[]gitlab.BuildStateValue{gitlab.Failed}, ListOptions: gitlab.ListOptions{PerPage: perPage}}, o)
		return resp, err
	})
	if err != nil {
		return err
	}
	for _, job := range jobs {
		if job.Status != "failed" || job.AllowFailure || !p.cur.once("job:"+strconv.FormatInt(job.ID, 10)) {
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
	return nil
}

// trace is the tail of a job's log without terminal colours and GitLab's
// section markers; "" when GitLab does not serve it (erased, no right).
// Only a rate limit is an error.
func (p *glPoll) trace(ctx context.Context, job int64) (string, error) {
	var log []byte
	err := p.call(ctx, "reading a job's log", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
		r, resp, err := p.g.gl.Jobs.GetTraceFile(p.g.p.Path, job, o)
		if err == nil {
			log, _ = io.ReadAll(io.LimitReader(r, 32<<20))
		}
		return resp, err
	})
	if _, limited := err.(*RateLimited); limited {
		return "", err
	}
	if err != nil {
		return "", nil
	}
	return tail(cleanTrace(string(log)), LogLines), nil
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

// hunkLines is how much of the diff above a commented line a hunk keeps.
const hunkLines = 20

// hunk is the diff hunk of path up to the commented line (on the old side
// for a removed line), as GitHub's diff_hunk is; the merge request's diffs
// are read once per poll, on the first inline note. A diff GitLab does not
// serve gives "", only a rate limit is an error.
func (p *glPoll) hunk(ctx context.Context, path string, line int, old bool) (string, error) {
	if p.diffs == nil {
		if err := p.readDiffs(ctx); err != nil {
			return "", err
		}
	}
	for _, d := range p.diffs {
		if d.NewPath == path || old && d.OldPath == path {
			return hunkAt(d.Diff, line, old), nil
		}
	}
	return "", nil
}

func (p *glPoll) readDiffs(ctx context.Context) error {
	p.diffs = []*gitlab.MergeRequestDiff{}
	for page := int64(1); page != 0; {
		var next int64
		err := p.call(ctx, "reading the merge request's diffs", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
			l, resp, err := p.g.gl.MergeRequests.ListMergeRequestDiffs(p.g.p.Path, p.number,
				&gitlab.ListMergeRequestDiffsOptions{ListOptions: gitlab.ListOptions{Page: page, PerPage: perPage}}, o)
			if resp != nil {
				next = resp.NextPage
			}
			p.diffs = append(p.diffs, l...)
			return resp, err
		})
		if _, limited := err.(*RateLimited); limited {
			return err
		}
		if err != nil {
			return nil // an older GitLab without /diffs: inline notes come without hunks
		}
		page = next
	}
	return nil
}

var hunkHeaderRE = regexp.MustCompile(`^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// hunkAt is the hunk header and the lines of diff above and at line.
func hunkAt(diff string, line int, old bool) string {
	var header string
	var body []string
	oldN, newN := 0, 0
	for _, l := range strings.Split(diff, "\n") {
		if m := hunkHeaderRE.FindStringSubmatch(l); m != nil {
			header, body = l, nil
			oldN, _ = strconv.Atoi(m[1])
			newN, _ = strconv.Atoi(m[2])
			continue
		}
		if header == "" || l == "" || l[0] == '\\' {
			continue
		}
		body = append(body, l)
		hit := false
		switch l[0] {
		case '+':
			hit = !old && newN == line
			newN++
		case '-':
			hit = old && oldN == line
			oldN++
		default:
			hit = !old && newN == line || old && oldN == line
			oldN, newN = oldN+1, newN+1
		}
		if hit {
			if len(body) > hunkLines {
				body = body[len(body)-hunkLines:]
			}
			return header + "\n" + strings.Join(body, "\n")
		}
	}
	return ""
}

package fakegitlab

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

type pipeline struct {
	id     int64
	sha    string
	ref    string // "" for a branch pipeline, refs/merge-requests/<iid>/merge for merged results
	status string // created, running, success, failed, canceled
	jobs   []*job
}

type job struct {
	id           int64
	name, stage  string
	status       string // success, failed, …
	reason       string // failure_reason
	allowFailure bool
	log          string
	erased       bool // no trace served
}

// AddPipeline starts a pipeline on sha with status and returns its id;
// the newest pipeline on a merge request's source commit is its
// head_pipeline.
func (s *Server) AddPipeline(projectPath, sha, status string) (id int64) {
	s.with(projectPath, func(p *project) {
		id = s.id()
		p.pipelines = append(p.pipelines, &pipeline{id: id, sha: sha, status: status})
	})
	return id
}

// AddMergedResultsPipeline starts a merged results pipeline for merge
// request iid: on a merge commit of its head and target (mergeSHA), ref
// refs/merge-requests/<iid>/merge; it is the merge request's head
// pipeline while it is the newest.
func (s *Server) AddMergedResultsPipeline(projectPath string, iid int, mergeSHA, status string) (id int64) {
	s.with(projectPath, func(p *project) {
		id = s.id()
		p.pipelines = append(p.pipelines, &pipeline{id: id, sha: mergeSHA, ref: fmt.Sprintf("refs/merge-requests/%d/merge", iid), status: status})
	})
	return id
}

// AddJob adds a job to pipeline id; a failed job's trace is log ("" when
// GitLab has erased it).
func (s *Server) AddJob(projectPath string, pipelineID int64, name, status, log string) (id int64) {
	s.with(projectPath, func(p *project) {
		for _, pl := range p.pipelines {
			if pl.id == pipelineID {
				id = s.id()
				j := &job{id: id, name: name, stage: "test", status: status, log: log, erased: log == ""}
				if status == "failed" {
					j.reason = "script_failure"
				}
				pl.jobs = append(pl.jobs, j)
			}
		}
	})
	return id
}

func (s *Server) pipelineJSON(p *project, pl *pipeline) map[string]any {
	return map[string]any{"id": pl.id, "iid": pl.id, "project_id": p.id, "sha": pl.sha, "ref": pl.ref, "status": pl.status, "source": "push",
		"web_url": fmt.Sprintf("%s/%s/-/pipelines/%d", s.srv.URL, p.path, pl.id)}
}

// pipelineJobs is GET …/pipelines/:id/jobs, filtered by scope[].
func (s *Server) pipelineJobs(p *project, id string, hr *http.Request) reply {
	scopes := map[string]bool{}
	for _, sc := range append(hr.URL.Query()["scope[]"], hr.URL.Query()["scope"]...) {
		scopes[sc] = true
	}
	for _, pl := range p.pipelines {
		if strconv.FormatInt(pl.id, 10) != id {
			continue
		}
		var all []any
		for i := len(pl.jobs) - 1; i >= 0; i-- { // newest first
			j := pl.jobs[i]
			if len(scopes) > 0 && !scopes[j.status] {
				continue
			}
			all = append(all, map[string]any{"id": j.id, "name": j.name, "stage": j.stage, "status": j.status, "failure_reason": j.reason,
				"allow_failure": j.allowFailure, "created_at": time.Now().UTC().Format(time.RFC3339), "pipeline": s.pipelineJSON(p, pl),
				"web_url": fmt.Sprintf("%s/%s/-/jobs/%d", s.srv.URL, p.path, j.id)})
		}
		return page(hr, all)
	}
	return message(http.StatusNotFound, "404 Not found")
}

// trace is GET …/jobs/:id/trace: the log as plain text.
func (s *Server) trace(p *project, id string) reply {
	for _, pl := range p.pipelines {
		for _, j := range pl.jobs {
			if strconv.FormatInt(j.id, 10) == id {
				if j.erased {
					return message(http.StatusNotFound, "404 Trace Not Found")
				}
				return reply{status: http.StatusOK, raw: []byte(j.log)}
			}
		}
	}
	return message(http.StatusNotFound, "404 Job Not Found")
}

package fakegitea

import (
	"fmt"
	"net/http"
	"strconv"
)

// run is a Gitea Actions workflow run on one commit; its jobs report
// commit statuses whose target URL is …/actions/runs/{run number}/jobs/{job
// index}, as Gitea's do.
type run struct {
	id, number int64
	workflow   string
	sha        string
	jobs       []*job
}

type job struct {
	id         int64
	name       string
	conclusion string // success, failure, …
	log        string
}

// SetVersion is what GET /version answers from now on (Actions job logs
// need 1.26.0 or later in the SDK); "" makes it a 404, as behind a proxy
// that hides it.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// AddActionsJob runs job of workflow on sha with conclusion (failure,
// success) and log, and sets the commit status Gitea Actions sets for it:
// context "<workflow> / <job> (pull_request)", a short description and the
// job's page as target URL. It returns the job's id.
func (s *Server) AddActionsJob(fullName, sha, workflow, jobName, conclusion, log string) int64 {
	s.mu.Lock()
	r := s.repos[fullName]
	var rn *run
	for _, x := range r.runs {
		if x.sha == sha && x.workflow == workflow {
			rn = x
		}
	}
	if rn == nil {
		s.runID++
		rn = &run{id: 100 + s.runID, number: s.runID, workflow: workflow, sha: sha}
		r.runs = append(r.runs, rn)
	}
	s.jobID++
	j := &job{id: 500 + s.jobID, name: jobName, conclusion: conclusion, log: log}
	rn.jobs = append(rn.jobs, j)
	target := fmt.Sprintf("%s/%s/actions/runs/%d/jobs/%d", s.srv.URL, fullName, rn.number, len(rn.jobs)-1)
	s.mu.Unlock()
	desc := "Successful in 12s"
	if conclusion != "success" {
		desc = "Failing after 12s"
	}
	s.AddStatus(fullName, sha, fmt.Sprintf("%s / %s (pull_request)", workflow, jobName), conclusion, desc, target)
	return j.id
}

// routeActions serves the runs of a commit, a run's jobs and a job's log.
func (s *Server) routeActions(r *repo, parts []string, hr *http.Request) (reply, bool) {
	if len(parts) < 2 || parts[0] != "actions" || hr.Method != http.MethodGet {
		return reply{}, false
	}
	switch {
	case len(parts) == 2 && parts[1] == "runs":
		var out []any
		for _, rn := range r.runs {
			if sha := hr.URL.Query().Get("head_sha"); sha == "" || sha == rn.sha {
				out = append(out, s.runJSON(r, rn))
			}
		}
		rep := s.page(hr, out)
		rep.body = map[string]any{"total_count": len(out), "workflow_runs": rep.body}
		return rep, true
	case len(parts) == 4 && parts[1] == "runs" && parts[3] == "jobs":
		for _, rn := range r.runs {
			if strconv.FormatInt(rn.id, 10) == parts[2] {
				var out []any
				for _, j := range rn.jobs {
					out = append(out, map[string]any{"id": j.id, "run_id": rn.id, "name": j.name, "head_sha": rn.sha,
						"status": "completed", "conclusion": j.conclusion})
				}
				rep := s.page(hr, out)
				rep.body = map[string]any{"total_count": len(out), "jobs": rep.body}
				return rep, true
			}
		}
		return s.message(http.StatusNotFound, "run not found"), true
	case len(parts) == 4 && parts[1] == "jobs" && parts[3] == "logs":
		for _, rn := range r.runs {
			for _, j := range rn.jobs {
				if strconv.FormatInt(j.id, 10) == parts[2] {
					return reply{status: http.StatusOK, raw: []byte(j.log)}, true
				}
			}
		}
		return s.message(http.StatusNotFound, "job not found"), true
	}
	return reply{}, false
}

func (s *Server) runJSON(r *repo, rn *run) map[string]any {
	conclusion := "success"
	for _, j := range rn.jobs {
		if j.conclusion != "success" {
			conclusion = "failure"
		}
	}
	return map[string]any{"id": rn.id, "run_number": rn.number, "head_sha": rn.sha, "path": rn.workflow + ".yml",
		"display_title": rn.workflow, "status": "completed", "conclusion": conclusion,
		"html_url": fmt.Sprintf("%s/%s/actions/runs/%d", s.srv.URL, r.fullName, rn.number)}
}

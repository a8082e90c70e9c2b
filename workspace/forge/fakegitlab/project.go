package fakegitlab

import (
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

type project struct {
	id          int64
	path        string
	gitDir      string         // the bare repository behind it
	access      map[string]int // username → access level, over the user's own
	shared      map[string]int // username → access through a group the project is shared with
	mrsDisabled bool
	mrs         []*MergeRequest
	pipelines   []*pipeline
	issues      []*issue // by iid − 1
}

// accessOf is u's membership as the project's permissions show it.
func (p *project) accessOf(u *user) int {
	if l, ok := p.access[u.username]; ok {
		return l
	}
	return u.access
}

// effectiveAccess adds what a group share gives, as members/all counts it.
func (p *project) effectiveAccess(u *user) int {
	return max(p.accessOf(u), p.shared[u.username])
}

// MergeRequest is a merge request the fake holds.
type MergeRequest struct {
	IID                   int
	Title, Description    string
	Source, Target, State string // State: opened, merged or closed
	MergedBy, ClosedBy    string
	Created               time.Time
	discussions           []*discussion
}

// AddProject serves path (group/sub/name), backed by the bare repository
// gitDir, where the token's user has access (Developer and above may push
// and open merge requests).
func (s *Server) AddProject(path, gitDir string, access int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects[path] = &project{id: s.id(), path: path, gitDir: gitDir, access: map[string]int{s.login: access}}
}

// ShareWithGroup gives username level on path through a group the
// project is shared with: members/all counts it, the project's
// permissions do not show it.
func (s *Server) ShareWithGroup(path, username string, level int) {
	s.with(path, func(p *project) {
		if p.shared == nil {
			p.shared = map[string]int{}
		}
		p.shared[s.userNamed(username).username] = level
	})
}

// DisableMergeRequests turns the merge requests feature off on path.
func (s *Server) DisableMergeRequests(path string) {
	s.with(path, func(p *project) { p.mrsDisabled = true })
}

// MergeRequests is a copy of path's merge requests, in the order opened.
func (s *Server) MergeRequests(path string) []MergeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MergeRequest
	if p := s.projects[path]; p != nil {
		for _, mr := range p.mrs {
			c := *mr
			c.discussions = nil
			out = append(out, c)
		}
	}
	return out
}

// Merge merges merge request iid as username; CloseMR closes it.
func (s *Server) Merge(path string, iid int, username string) {
	s.with(path, func(p *project) { mr := p.mrs[iid-1]; mr.State, mr.MergedBy = "merged", username })
}

func (s *Server) CloseMR(path string, iid int, username string) {
	s.with(path, func(p *project) { mr := p.mrs[iid-1]; mr.State, mr.ClosedBy = "closed", username })
}

func (s *Server) with(path string, fn func(p *project)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[path]
	if p == nil {
		panic("fakegitlab: no project " + path)
	}
	fn(p)
}

// routeProject serves the endpoints under /projects/:id.
func (s *Server) routeProject(p *project, parts []string, hr *http.Request, body []byte) reply {
	me := s.userNamed(s.login)
	get, post, put := hr.Method == http.MethodGet, hr.Method == http.MethodPost, hr.Method == http.MethodPut
	switch {
	case len(parts) == 0 && get:
		return ok(s.projectJSON(p, p.accessOf(me)))
	case len(parts) == 1 && parts[0] == "merge_requests" && get:
		return s.listMRs(p, hr)
	case len(parts) == 1 && parts[0] == "merge_requests" && post:
		if p.effectiveAccess(me) < Developer || p.mrsDisabled {
			return message(http.StatusForbidden, "403 Forbidden")
		}
		return s.createMR(p, params(hr, body))
	case len(parts) == 3 && parts[0] == "members" && parts[1] == "all" && get:
		return s.member(p, parts[2])
	case len(parts) == 3 && parts[0] == "pipelines" && parts[2] == "jobs" && get:
		return s.pipelineJobs(p, parts[1], hr)
	case len(parts) == 3 && parts[0] == "jobs" && parts[2] == "trace" && get:
		return s.trace(p, parts[1])
	}
	if rep, handled := s.routeIssues(p, parts, hr, body); handled {
		return rep
	}
	switch {
	case len(parts) >= 2 && parts[0] == "merge_requests":
		iid, err := strconv.Atoi(parts[1])
		if err != nil || iid < 1 || iid > len(p.mrs) {
			return message(http.StatusNotFound, "404 Not found")
		}
		mr := p.mrs[iid-1]
		switch {
		case len(parts) == 2 && get:
			return ok(s.mrJSON(p, mr))
		case len(parts) == 2 && put:
			if p.effectiveAccess(me) < Developer {
				return message(http.StatusForbidden, "403 Forbidden")
			}
			return s.updateMR(p, mr, params(hr, body))
		}
		return s.routeNotes(p, mr, parts[2:], hr, body)
	}
	return notFound()
}

func (s *Server) projectJSON(p *project, access int) map[string]any {
	name := p.path[strings.LastIndexByte(p.path, '/')+1:]
	mrLevel := "enabled"
	if p.mrsDisabled {
		mrLevel = "disabled"
	}
	var perms any
	if access > NoAccess {
		perms = map[string]any{"project_access": map[string]any{"access_level": access, "notification_level": 3}, "group_access": nil}
	}
	return map[string]any{"id": p.id, "name": name, "path": name, "path_with_namespace": p.path, "default_branch": "main",
		"web_url": s.srv.URL + "/" + p.path, "http_url_to_repo": s.srv.URL + "/" + p.path + ".git",
		"merge_requests_enabled": !p.mrsDisabled, "merge_requests_access_level": mrLevel, "permissions": perms}
}

// listMRs filters by state (opened, closed, merged, locked, all) and
// source/target branch, newest first as GitLab orders them by default.
func (s *Server) listMRs(p *project, hr *http.Request) reply {
	q := hr.URL.Query()
	var out []any
	for i := len(p.mrs) - 1; i >= 0; i-- {
		mr := p.mrs[i]
		if st := q.Get("state"); st != "" && st != "all" && st != mr.State ||
			q.Get("source_branch") != "" && q.Get("source_branch") != mr.Source ||
			q.Get("target_branch") != "" && q.Get("target_branch") != mr.Target {
			continue
		}
		out = append(out, s.basicMRJSON(p, mr))
	}
	return page(hr, out)
}

func (s *Server) createMR(p *project, in map[string]string) reply {
	for _, k := range []string{"source_branch", "target_branch", "title"} {
		if strings.TrimSpace(in[k]) == "" {
			return reply{status: http.StatusBadRequest, body: map[string]any{"error": k + " is missing"}}
		}
	}
	src, dst := in["source_branch"], in["target_branch"]
	for _, mr := range p.mrs {
		if mr.State == "opened" && mr.Source == src && mr.Target == dst {
			return reply{status: http.StatusConflict, body: map[string]any{"message": []string{
				fmt.Sprintf("Another open merge request already exists for this source branch: !%d", mr.IID)}}}
		}
	}
	var problems []string
	if src == dst {
		problems = append(problems, "You can not use same project/branch for source and target")
	}
	for _, b := range []string{src, dst} {
		if branchSHA(p.gitDir, b) == "" {
			problems = append(problems, fmt.Sprintf("%s branch %q does not exist", map[bool]string{true: "Source", false: "Target"}[b == src], b))
		}
	}
	if len(problems) > 0 {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{"message": problems}}
	}
	mr := &MergeRequest{IID: len(p.mrs) + 1, Title: in["title"], Description: in["description"], Source: src, Target: dst, State: "opened", Created: time.Now().UTC()}
	p.mrs = append(p.mrs, mr)
	return reply{status: http.StatusCreated, body: s.mrJSON(p, mr)}
}

func (s *Server) updateMR(p *project, mr *MergeRequest, in map[string]string) reply {
	if v, set := in["title"]; set {
		mr.Title = v
	}
	if v, set := in["description"]; set {
		mr.Description = v
	}
	switch in["state_event"] {
	case "close":
		mr.State, mr.ClosedBy = "closed", s.login
	case "reopen":
		mr.State, mr.ClosedBy = "opened", ""
	}
	return ok(s.mrJSON(p, mr))
}

func (s *Server) basicMRJSON(p *project, mr *MergeRequest) map[string]any {
	state := map[string]any{"merged_by": s.userJSON(mr.MergedBy), "merge_user": s.userJSON(mr.MergedBy), "closed_by": s.userJSON(mr.ClosedBy)}
	out := map[string]any{
		"id": p.id*1000 + int64(mr.IID), "iid": mr.IID, "project_id": p.id, "source_project_id": p.id, "target_project_id": p.id,
		"title": mr.Title, "description": mr.Description, "state": mr.State, "source_branch": mr.Source, "target_branch": mr.Target,
		"sha": branchSHA(p.gitDir, mr.Source), "author": s.userJSON(s.login), "created_at": mr.Created.Format(time.RFC3339Nano),
		"web_url": fmt.Sprintf("%s/%s/-/merge_requests/%d", s.srv.URL, p.path, mr.IID), "user_notes_count": userNotes(mr),
	}
	for k, v := range state {
		out[k] = v
	}
	return out
}

// mrJSON is the single merge request, with its head pipeline: the newest
// pipeline on the source branch's commit, or of its merged results.
func (s *Server) mrJSON(p *project, mr *MergeRequest) map[string]any {
	out := s.basicMRJSON(p, mr)
	out["head_pipeline"] = nil
	sha := out["sha"].(string)
	mergeRef := fmt.Sprintf("refs/merge-requests/%d/merge", mr.IID)
	for i := len(p.pipelines) - 1; i >= 0; i-- {
		if pl := p.pipelines[i]; pl.sha == sha && pl.ref == "" || pl.ref == mergeRef {
			out["head_pipeline"] = s.pipelineJSON(p, pl)
			break
		}
	}
	return out
}

func (s *Server) member(p *project, id string) reply {
	for _, u := range s.users {
		if strconv.FormatInt(u.id, 10) == id && p.effectiveAccess(u) > NoAccess {
			return ok(map[string]any{"id": u.id, "username": u.username, "name": u.username, "state": "active", "access_level": p.effectiveAccess(u)})
		}
	}
	return message(http.StatusNotFound, "404 Not found")
}

// branchSHA is the branch's commit in the bare repository, "" if none.
func branchSHA(gitDir, branch string) string {
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

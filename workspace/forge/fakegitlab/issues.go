package fakegitlab

import (
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// issue is one issue the fake holds: GitLab numbers a project's issues
// (iid) apart from its merge requests, from 1.
type issue struct {
	iid                int
	author             string
	title, description string
	state              string // opened or closed
	closedBy           string
	labels             []string
	assignees          []string
	created, updated   time.Time
	labelEvents        []map[string]any // resource label events, oldest first
	notes              []*Note          // oldest first; GitLab's system notes ("assigned to @bob") among them
}

// AddIssue opens an issue by author and returns its iid.
func (s *Server) AddIssue(projectPath, author, title, description string) (iid int) {
	s.with(projectPath, func(p *project) {
		s.userNamed(author)
		now := time.Now().UTC()
		is := &issue{iid: len(p.issues) + 1, author: author, title: title, description: description, state: "opened", created: now, updated: now}
		p.issues = append(p.issues, is)
		iid = is.iid
	})
	return iid
}

// Label adds label to issue iid as actor: a resource label event "add".
func (s *Server) Label(projectPath string, iid int, label, actor string) {
	s.onIssue(projectPath, iid, func(p *project, is *issue) {
		is.labels = append(is.labels, label)
		is.updated = time.Now().UTC()
		is.labelEvents = append(is.labelEvents, map[string]any{"id": s.id(), "action": "add", "created_at": is.updated.Format(time.RFC3339Nano),
			"resource_type": "Issue", "resource_id": p.id*1000 + int64(is.iid), "user": s.userJSON(actor),
			"label": map[string]any{"id": len(label), "name": label, "color": "#ededed"}})
	})
}

// Assign assigns issue iid to assignee as actor: GitLab's system note
// "assigned to @assignee" by actor.
func (s *Server) Assign(projectPath string, iid int, assignee, actor string) {
	s.onIssue(projectPath, iid, func(p *project, is *issue) {
		s.userNamed(assignee)
		is.assignees = append(is.assignees, assignee)
		is.updated = time.Now().UTC()
		is.notes = append(is.notes, &Note{ID: s.id(), Author: actor, Body: "assigned to @" + assignee, System: true, Created: is.updated})
	})
}

// CloseIssue closes issue iid as actor.
func (s *Server) CloseIssue(projectPath string, iid int, actor string) {
	s.onIssue(projectPath, iid, func(p *project, is *issue) {
		is.state, is.closedBy, is.updated = "closed", actor, time.Now().UTC()
		is.notes = append(is.notes, &Note{ID: s.id(), Author: actor, Body: "closed", System: true, Created: is.updated})
	})
}

// AddIssueNote adds a person's note (a comment) by author to issue iid.
func (s *Server) AddIssueNote(projectPath string, iid int, author, body string) (id int64) {
	s.onIssue(projectPath, iid, func(p *project, is *issue) {
		s.userNamed(author)
		n := &Note{ID: s.id(), Author: author, Body: body, Created: time.Now().UTC()}
		is.notes = append(is.notes, n)
		is.updated = n.Created
		id = n.ID
	})
	return id
}

// userIssueNotes is an issue's user_notes_count: its notes but GitLab's
// own system notes.
func userIssueNotes(is *issue) int {
	n := 0
	for _, note := range is.notes {
		if !note.System {
			n++
		}
	}
	return n
}

// IssueNotes is a copy of the notes on issue iid, oldest first.
func (s *Server) IssueNotes(projectPath string, iid int) []Note {
	var out []Note
	s.onIssue(projectPath, iid, func(p *project, is *issue) {
		for _, n := range is.notes {
			out = append(out, *n)
		}
	})
	return out
}

func (s *Server) onIssue(projectPath string, iid int, fn func(p *project, is *issue)) {
	s.with(projectPath, func(p *project) {
		if iid >= 1 && iid <= len(p.issues) {
			fn(p, p.issues[iid-1])
		}
	})
}

func (s *Server) issueJSON(p *project, is *issue) map[string]any {
	assignees := []any{}
	for _, a := range is.assignees {
		assignees = append(assignees, s.userJSON(a))
	}
	out := map[string]any{"id": p.id*1000 + int64(is.iid), "iid": is.iid, "project_id": p.id, "title": is.title, "description": is.description,
		"state": is.state, "labels": append([]string{}, is.labels...), "assignees": assignees, "author": s.userJSON(is.author),
		"closed_by": s.userJSON(is.closedBy), "issue_type": "issue", "type": "ISSUE", "user_notes_count": userIssueNotes(is),
		"created_at": is.created.Format(time.RFC3339Nano), "updated_at": is.updated.Format(time.RFC3339Nano),
		"web_url": fmt.Sprintf("%s/%s/-/issues/%d", s.srv.URL, p.path, is.iid)}
	if len(is.assignees) > 0 {
		out["assignee"] = s.userJSON(is.assignees[0])
	}
	return out
}

func (s *Server) issueNoteJSON(p *project, is *issue, n *Note) map[string]any {
	return map[string]any{"id": n.ID, "type": nil, "body": n.Body, "author": s.userJSON(n.Author), "system": n.System,
		"created_at": n.Created.Format(time.RFC3339Nano), "updated_at": n.Created.Format(time.RFC3339Nano),
		"noteable_id": p.id*1000 + int64(is.iid), "noteable_type": "Issue", "noteable_iid": is.iid, "project_id": p.id, "internal": false}
}

// routeIssues serves a project's issues (list, one, resource label
// events, notes), its branches and its pipelines list.
func (s *Server) routeIssues(p *project, parts []string, hr *http.Request, body []byte) (reply, bool) {
	get, post := hr.Method == http.MethodGet, hr.Method == http.MethodPost
	if len(parts) == 1 && parts[0] == "issues" && get {
		return s.listIssues(p, hr), true
	}
	if len(parts) == 3 && parts[0] == "repository" && parts[1] == "branches" && get {
		name, err := url.PathUnescape(parts[2])
		sha := branchSHA(p.gitDir, name)
		if err != nil || sha == "" {
			return message(http.StatusNotFound, "404 Branch Not Found"), true
		}
		return ok(map[string]any{"name": name, "merged": false, "protected": false, "default": name == "main",
			"commit":  map[string]any{"id": sha, "short_id": sha[:8], "title": "", "message": ""},
			"web_url": fmt.Sprintf("%s/%s/-/tree/%s", s.srv.URL, p.path, name)}), true
	}
	if len(parts) == 1 && parts[0] == "pipelines" && get {
		return s.listPipelines(p, hr), true
	}
	if len(parts) == 3 && parts[0] == "repository" && parts[1] == "commits" && get {
		return s.commit(p, parts[2]), true
	}
	if len(parts) < 2 || parts[0] != "issues" {
		return reply{}, false
	}
	iid, err := strconv.Atoi(parts[1])
	if err != nil || iid < 1 || iid > len(p.issues) {
		return message(http.StatusNotFound, "404 Not found"), true
	}
	is := p.issues[iid-1]
	switch {
	case len(parts) == 2 && get:
		return ok(s.issueJSON(p, is)), true
	case len(parts) == 3 && parts[2] == "resource_label_events" && get:
		var all []any
		for _, e := range is.labelEvents {
			all = append(all, e)
		}
		return page(hr, all), true
	case len(parts) == 3 && parts[2] == "notes" && get:
		var all []any
		for _, n := range is.notes {
			all = append(all, s.issueNoteJSON(p, is, n))
		}
		if hr.URL.Query().Get("sort") != "asc" { // created_at desc, GitLab's default
			slices.Reverse(all)
		}
		return page(hr, all), true
	case len(parts) == 3 && parts[2] == "notes" && post:
		text := params(hr, body)["body"]
		if strings.TrimSpace(text) == "" {
			return reply{status: http.StatusBadRequest, body: map[string]any{"error": "body is missing"}}, true
		}
		n := &Note{ID: s.id(), Author: s.login, Body: text, Created: time.Now().UTC()}
		is.notes = append(is.notes, n)
		is.updated = n.Created
		return reply{status: http.StatusCreated, body: s.issueNoteJSON(p, is, n)}, true
	}
	return notFound(), true
}

// listIssues is GET …/issues: state (opened, closed, all: the default),
// labels (every one), assignee_username, updated_after (at or after);
// order_by created_at (default) or updated_at, sort desc (default) or asc.
func (s *Server) listIssues(p *project, hr *http.Request) reply {
	q := hr.URL.Query()
	after, _ := time.Parse(time.RFC3339, q.Get("updated_after"))
	var list []*issue
	for _, is := range p.issues {
		if st := q.Get("state"); st != "" && st != "all" && is.state != st || is.updated.Before(after) {
			continue
		}
		if who := q.Get("assignee_username"); who != "" && !slices.Contains(is.assignees, who) {
			continue
		}
		if labels := q.Get("labels"); labels != "" && slices.ContainsFunc(strings.Split(labels, ","), func(l string) bool { return !slices.Contains(is.labels, l) }) {
			continue
		}
		list = append(list, is)
	}
	key := func(is *issue) time.Time { return is.created }
	if q.Get("order_by") == "updated_at" {
		key = func(is *issue) time.Time { return is.updated }
	}
	slices.SortStableFunc(list, func(a, b *issue) int { return key(a).Compare(key(b)) })
	if q.Get("sort") != "asc" {
		slices.Reverse(list)
	}
	var all []any
	for _, is := range list {
		all = append(all, s.issueJSON(p, is))
	}
	return page(hr, all)
}

// listPipelines is GET …/pipelines: sha, ref and status filters, newest
// (highest id) first.
func (s *Server) listPipelines(p *project, hr *http.Request) reply {
	q := hr.URL.Query()
	var all []any
	for _, pl := range slices.Backward(p.pipelines) {
		if sha := q.Get("sha"); sha != "" && pl.sha != sha || q.Get("ref") != "" && pl.ref != q.Get("ref") || q.Get("status") != "" && pl.status != q.Get("status") {
			continue
		}
		all = append(all, s.pipelineJSON(p, pl))
	}
	return page(hr, all)
}

// commit is GET …/repository/commits/:sha (a sha or a branch name), with
// last_pipeline: the newest pipeline on the commit.
func (s *Server) commit(p *project, ref string) reply {
	ref, err := url.PathUnescape(ref)
	if err != nil {
		return message(http.StatusNotFound, "404 Commit Not Found")
	}
	sha := branchSHA(p.gitDir, ref)
	if sha == "" {
		sha = revParse(p.gitDir, ref)
	}
	if sha == "" {
		return message(http.StatusNotFound, "404 Commit Not Found")
	}
	out := map[string]any{"id": sha, "short_id": sha[:8], "title": "", "message": "", "parent_ids": []string{},
		"web_url": fmt.Sprintf("%s/%s/-/commit/%s", s.srv.URL, p.path, sha), "last_pipeline": nil}
	for _, pl := range slices.Backward(p.pipelines) {
		if pl.sha == sha && !strings.HasPrefix(pl.ref, "refs/merge-requests/") {
			out["last_pipeline"] = s.pipelineJSON(p, pl)
			break
		}
	}
	return ok(out)
}

// revParse is the commit ref names in the bare repository, "" if none.
func revParse(gitDir, ref string) string {
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

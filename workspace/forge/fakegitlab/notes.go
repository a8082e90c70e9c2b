package fakegitlab

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

type discussion struct {
	id         string // 40 hex digits, as GitLab's
	individual bool   // a lone note, not a thread
	notes      []*Note
}

// Note is one note on a merge request.
type Note struct {
	ID         int64
	Discussion string
	Author     string
	Body       string
	System     bool
	Path       string // a DiffNote's file and line (new side; OldLine for a removed line)
	Line       int
	OldLine    int
	Created    time.Time
}

func (s *Server) discussionID() string {
	return fmt.Sprintf("%040x", s.id())
}

// AddDiffNote starts a thread on path:line (the new side of the diff) of
// merge request iid by author, or replies in discussion inReplyTo; it
// returns the note's id and its discussion's.
func (s *Server) AddDiffNote(projectPath string, iid int, author, path string, line int, body, inReplyTo string) (id int64, discussionID string) {
	s.with(projectPath, func(p *project) {
		n := &Note{ID: s.id(), Author: author, Body: body, Path: path, Line: line, Created: time.Now().UTC()}
		s.userNamed(author)
		id, discussionID = n.ID, s.attach(p.mrs[iid-1], n, inReplyTo, false)
	})
	return id, discussionID
}

// AddNote adds a note by author to the merge request's conversation.
func (s *Server) AddNote(projectPath string, iid int, author, body string) (id int64) {
	s.with(projectPath, func(p *project) {
		n := &Note{ID: s.id(), Author: author, Body: body, Created: time.Now().UTC()}
		s.userNamed(author)
		id = n.ID
		s.attach(p.mrs[iid-1], n, "", true)
	})
	return id
}

// AddSystemNote adds a note GitLab itself writes ("added 1 commit") for
// what author did.
func (s *Server) AddSystemNote(projectPath string, iid int, author, body string) {
	s.with(projectPath, func(p *project) {
		s.userNamed(author)
		s.attach(p.mrs[iid-1], &Note{ID: s.id(), Author: author, Body: body, System: true, Created: time.Now().UTC()}, "", true)
	})
}

// AddReview submits a review by author that requests changes: its
// summary (if any) as a note, then GitLab's system note "requested
// changes".
func (s *Server) AddReview(projectPath string, iid int, author, summary string) {
	if summary != "" {
		s.AddNote(projectPath, iid, author, summary)
	}
	s.AddSystemNote(projectPath, iid, author, "requested changes")
}

// Notes is a copy of every note on merge request iid, in order.
func (s *Server) Notes(projectPath string, iid int) []Note {
	var out []Note
	s.with(projectPath, func(p *project) {
		for _, d := range p.mrs[iid-1].discussions {
			for _, n := range d.notes {
				out = append(out, *n)
			}
		}
	})
	return out
}

// attach puts n in discussion to, or in a new one; a reply takes its
// thread's position.
func (s *Server) attach(mr *MergeRequest, n *Note, to string, individual bool) string {
	for _, d := range mr.discussions {
		if d.id == to {
			first := d.notes[0]
			n.Path, n.Line, n.OldLine, n.Discussion = first.Path, first.Line, first.OldLine, d.id
			d.notes = append(d.notes, n)
			return d.id
		}
	}
	d := &discussion{id: s.discussionID(), individual: individual && n.Path == ""}
	n.Discussion = d.id
	d.notes = append(d.notes, n)
	mr.discussions = append(mr.discussions, d)
	return d.id
}

func userNotes(mr *MergeRequest) int {
	n := 0
	for _, d := range mr.discussions {
		for _, note := range d.notes {
			if !note.System {
				n++
			}
		}
	}
	return n
}

// routeNotes serves a merge request's discussions, notes and diffs.
func (s *Server) routeNotes(p *project, mr *MergeRequest, parts []string, hr *http.Request, body []byte) reply {
	get, post := hr.Method == http.MethodGet, hr.Method == http.MethodPost
	switch {
	case len(parts) == 1 && parts[0] == "discussions" && get:
		var all []any
		for _, d := range mr.discussions {
			all = append(all, s.discussionJSON(p, mr, d))
		}
		return page(hr, all)
	case len(parts) == 1 && parts[0] == "notes" && get:
		var all []any
		for i := len(mr.discussions) - 1; i >= 0; i-- { // created_at desc, GitLab's default
			for j := len(mr.discussions[i].notes) - 1; j >= 0; j-- {
				all = append(all, s.noteJSON(p, mr, mr.discussions[i].notes[j]))
			}
		}
		return page(hr, all)
	case len(parts) == 1 && parts[0] == "notes" && post:
		text := params(hr, body)["body"]
		if strings.TrimSpace(text) == "" {
			return reply{status: http.StatusBadRequest, body: map[string]any{"error": "body is missing"}}
		}
		n := &Note{ID: s.id(), Author: s.login, Body: text, Created: time.Now().UTC()}
		s.attach(mr, n, "", true)
		return reply{status: http.StatusCreated, body: s.noteJSON(p, mr, n)}
	case len(parts) == 3 && parts[0] == "discussions" && parts[2] == "notes" && post:
		return s.replyIn(p, mr, parts[1], params(hr, body)["body"])
	case len(parts) == 1 && parts[0] == "diffs" && get:
		return page(hr, diffs(p.gitDir, mr.Target, mr.Source))
	}
	return notFound()
}

func (s *Server) replyIn(p *project, mr *MergeRequest, to, text string) reply {
	if strings.TrimSpace(text) == "" {
		return reply{status: http.StatusBadRequest, body: map[string]any{"error": "body is missing"}}
	}
	for _, d := range mr.discussions {
		if d.id == to {
			d.individual = false // a reply makes a lone note a thread, as on GitLab
			n := &Note{ID: s.id(), Author: s.login, Body: text, Created: time.Now().UTC()}
			s.attach(mr, n, to, false)
			return reply{status: http.StatusCreated, body: s.noteJSON(p, mr, n)}
		}
	}
	return message(http.StatusNotFound, "404 Discussion Not Found")
}

func (s *Server) discussionJSON(p *project, mr *MergeRequest, d *discussion) map[string]any {
	notes := []any{}
	for _, n := range d.notes {
		notes = append(notes, s.noteJSON(p, mr, n))
	}
	return map[string]any{"id": d.id, "individual_note": d.individual, "notes": notes}
}

func (s *Server) noteJSON(p *project, mr *MergeRequest, n *Note) map[string]any {
	out := map[string]any{"id": n.ID, "type": nil, "body": n.Body, "author": s.userJSON(n.Author), "system": n.System,
		"created_at": n.Created.Format(time.RFC3339Nano), "updated_at": n.Created.Format(time.RFC3339Nano),
		"noteable_id": p.id*1000 + int64(mr.IID), "noteable_type": "MergeRequest", "noteable_iid": mr.IID, "project_id": p.id,
		"resolvable": false, "internal": false}
	if n.Path != "" {
		base, head := branchSHA(p.gitDir, mr.Target), branchSHA(p.gitDir, mr.Source)
		pos := map[string]any{"base_sha": base, "start_sha": base, "head_sha": head, "position_type": "text",
			"old_path": n.Path, "new_path": n.Path, "new_line": nil, "old_line": nil}
		if n.Line > 0 {
			pos["new_line"] = n.Line
		}
		if n.OldLine > 0 {
			pos["old_line"] = n.OldLine
		}
		out["type"], out["position"], out["resolvable"], out["resolved"] = "DiffNote", pos, true, false
	} else if len(mr.discussions) > 0 && !s.individual(mr, n) {
		out["type"] = "DiscussionNote"
	}
	return out
}

func (s *Server) individual(mr *MergeRequest, n *Note) bool {
	for _, d := range mr.discussions {
		if d.id == n.Discussion {
			return d.individual
		}
	}
	return true
}

// diffs is GET …/merge_requests/:iid/diffs: one entry per changed file
// between the branches' merge base and the source, from git itself.
func diffs(gitDir, target, source string) []any {
	out := []any{}
	names, err := exec.Command("git", "--git-dir="+gitDir, "diff", "--name-status", "--no-renames", target+"..."+source).Output()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(names)), "\n") {
		status, path, found := strings.Cut(line, "\t")
		if !found {
			continue
		}
		raw, _ := exec.Command("git", "--git-dir="+gitDir, "diff", "--no-color", "-U3", target+"..."+source, "--", path).Output()
		diff := string(raw)
		if i := strings.Index(diff, "\n@@"); i >= 0 {
			diff = diff[i+1:] // GitLab's diff starts at the first hunk
		}
		out = append(out, map[string]any{"old_path": path, "new_path": path, "a_mode": "100644", "b_mode": "100644", "diff": diff,
			"new_file": status == "A", "renamed_file": false, "deleted_file": status == "D", "generated_file": false, "collapsed": false, "too_large": false})
	}
	return out
}

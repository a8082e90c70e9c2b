package fakegitea

import (
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Page sizes as Gitea's defaults set them ([api] DEFAULT_PAGING_NUM and
// MAX_RESPONSE_ITEMS).
const (
	defaultLimit = 30
	maxLimit     = 50
)

type repo struct {
	fullName string
	gitDir   string // the bare repository behind it
	push     bool
	admin    bool // the token's user administers it (SetAdmin)
	pulls    []*Pull
	fb       feedback
	runs     []*run   // Gitea Actions
	issues   []*issue // numbered from firstIssue
}

// Pull is a pull request the fake holds.
type Pull struct {
	Number      int
	Title, Body string
	Head, Base  string
	State       string // open or closed
	Merged      bool
	MergedBy    string // set by Merge
	ClosedBy    string // set by Merge and ClosePull
	closedAt    time.Time
	closeEvent  int64 // the timeline event's id
}

// AddRepo serves owner/name, backed by the bare repository gitDir; push
// is the token's permission there.
func (s *Server) AddRepo(fullName, gitDir string, push bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName] = &repo{fullName: fullName, gitDir: gitDir, push: push, fb: newFeedback()}
}

// SetAdmin makes the token's user an admin of fullName: only then does
// Gitea tell it other users' permissions.
func (s *Server) SetAdmin(fullName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName].admin, s.repos[fullName].push = true, true
}

// Pulls is a copy of owner/name's pull requests, in the order opened.
func (s *Server) Pulls(fullName string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pull
	if r := s.repos[fullName]; r != nil {
		for _, p := range r.pulls {
			out = append(out, *p)
		}
	}
	return out
}

// Merge marks pull request number merged (and so closed) by login.
func (s *Server) Merge(fullName string, number int, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pull(s.repos[fullName], number); p != nil {
		s.nextID++
		p.State, p.Merged, p.MergedBy, p.ClosedBy, p.closedAt, p.closeEvent = "closed", true, login, login, s.now(), s.nextID
	}
}

// ClosePull closes pull request number without merging it, by login: the
// timeline gets a close event.
func (s *Server) ClosePull(fullName string, number int, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pull(s.repos[fullName], number); p != nil {
		s.nextID++
		p.State, p.ClosedBy, p.closedAt, p.closeEvent = "closed", login, s.now(), s.nextID
	}
}

func (s *Server) pull(r *repo, number int) *Pull {
	if r == nil || number < 1 || number > len(r.pulls) {
		return nil
	}
	return r.pulls[number-1]
}

func (s *Server) repoJSON(r *repo) map[string]any {
	owner, name, _ := strings.Cut(r.fullName, "/")
	return map[string]any{"id": 1, "name": name, "full_name": r.fullName, "owner": s.userJSON(owner),
		"html_url": s.srv.URL + "/" + r.fullName, "clone_url": s.srv.URL + "/" + r.fullName + ".git",
		"default_branch": "main", "has_pull_requests": true, "archived": false,
		"permissions": map[string]bool{"admin": r.admin, "push": r.push, "pull": true}}
}

// pullJSON is p as Gitea shows it; heads are the repository's branches
// (heads(r)) with their commits.
func (s *Server) pullJSON(r *repo, p *Pull, heads map[string]string) map[string]any {
	owner, _, _ := strings.Cut(r.fullName, "/")
	branch := func(ref string) map[string]any {
		return map[string]any{"label": ref, "ref": ref, "sha": heads[ref], "repo_id": 1, "repo": s.repoJSON(r)}
	}
	return map[string]any{
		"id": 1000 + p.Number, "number": p.Number, "state": p.State, "title": p.Title, "body": p.Body,
		"user":     s.userJSON(s.login),
		"html_url": fmt.Sprintf("%s/%s/pulls/%d", s.srv.URL, r.fullName, p.Number),
		"url":      fmt.Sprintf("%s/%s/pulls/%d", s.srv.URL, r.fullName, p.Number),
		"head":     branch(p.Head), "base": branch(p.Base),
		"merged": p.Merged, "merged_by": s.userJSON(p.MergedBy), "mergeable": true,
		"merged_at": timeOrNil(p.Merged, p.closedAt), "closed_at": timeOrNil(p.State == "closed", p.closedAt),
		"comments": len(r.fb.comments[p.Number]), "poster": owner,
	}
}

func timeOrNil(set bool, t time.Time) any {
	if !set {
		return nil
	}
	return t
}

// heads is every branch of the bare repository with its commit, read at
// once (a list of pull requests asks git one time).
func heads(gitDir string) map[string]string {
	out, _ := exec.Command("git", "--git-dir="+gitDir, "for-each-ref", "--format=%(refname:lstrip=2) %(objectname)", "refs/heads").Output()
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, sha, ok := strings.Cut(line, " "); ok {
			m[name] = sha
		}
	}
	return m
}

// branchSHA is the branch's commit in the bare repository, "" if none.
func branchSHA(gitDir, branch string) string {
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// routePulls serves /repos/{o}/{r}/pulls[/{index}].
func (s *Server) routePulls(r *repo, parts []string, hr *http.Request, body []byte) (reply, bool) {
	if len(parts) == 0 || parts[0] != "pulls" || len(parts) > 2 {
		return reply{}, false
	}
	if len(parts) == 1 {
		switch hr.Method {
		case http.MethodGet:
			return s.list(r, hr), true
		case http.MethodPost:
			return s.create(r, body), true
		}
		return reply{}, false
	}
	n, err := strconv.Atoi(parts[1])
	p := s.pull(r, n)
	if err != nil || p == nil {
		return s.message(http.StatusNotFound, "pull request does not exist"), true
	}
	switch hr.Method {
	case http.MethodGet:
		return reply{status: http.StatusOK, body: s.pullJSON(r, p, heads(r.gitDir))}, true
	case http.MethodPatch:
		return s.edit(r, p, body), true
	}
	return reply{}, false
}

// list is GET /repos/{o}/{r}/pulls?state=open|closed|all, newest first,
// one page of page/limit.
func (s *Server) list(r *repo, hr *http.Request) reply {
	state := hr.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	var out []any
	refs := heads(r.gitDir)
	for i := len(r.pulls) - 1; i >= 0; i-- {
		if p := r.pulls[i]; state == "all" || p.State == state {
			out = append(out, s.pullJSON(r, p, refs))
		}
	}
	return s.page(hr, out)
}

type newPull struct {
	Title string `json:"title"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Body  string `json:"body"`
}

// create is POST /repos/{o}/{r}/pulls: 422 for a missing field, 404 for
// a branch the repository lacks, 409 for a second open pull request on
// the same head and base.
func (s *Server) create(r *repo, body []byte) reply {
	var np newPull
	if err := decode(body, &np); err != nil {
		return s.badJSON(err)
	}
	for field, v := range map[string]string{"Head": np.Head, "Base": np.Base, "Title": np.Title} {
		if v == "" {
			return s.message(http.StatusUnprocessableEntity, fmt.Sprintf("[%s]: Required", field))
		}
	}
	if !r.push {
		return s.message(http.StatusForbidden, "User does not have permission to create pull requests")
	}
	for _, b := range []string{np.Head, np.Base} {
		if branchSHA(r.gitDir, b) == "" {
			return s.message(http.StatusNotFound, fmt.Sprintf("branch %s does not exist", b))
		}
	}
	for _, p := range r.pulls {
		if p.State == "open" && p.Head == np.Head && p.Base == np.Base {
			return s.message(http.StatusConflict, fmt.Sprintf("pull request already exists for these targets [id: %d, issue_id: %d, head_repo_id: 1, base_repo_id: 1, head_branch: %s, base_branch: %s]", 1000+p.Number, p.Number, p.Head, p.Base))
		}
	}
	p := &Pull{Number: len(r.pulls) + 1, Title: np.Title, Body: np.Body, Head: np.Head, Base: np.Base, State: "open"}
	r.pulls = append(r.pulls, p)
	return reply{status: http.StatusCreated, body: s.pullJSON(r, p, heads(r.gitDir))}
}

// edit is PATCH /repos/{o}/{r}/pulls/{index}: the fields given change.
func (s *Server) edit(r *repo, p *Pull, body []byte) reply {
	var patch struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}
	if err := decode(body, &patch); err != nil {
		return s.badJSON(err)
	}
	if !r.push {
		return s.message(http.StatusForbidden, "User does not have permission to edit this pull request")
	}
	if patch.Title != nil {
		p.Title = *patch.Title
	}
	if patch.Body != nil {
		p.Body = *patch.Body
	}
	return reply{status: http.StatusCreated, body: s.pullJSON(r, p, heads(r.gitDir))} // Gitea answers an edit with 201
}

// page is one page of items by the request's page and limit, with
// X-Total-Count and a Link header (next, last, first, prev) as Gitea
// sends them.
func (s *Server) page(hr *http.Request, items []any) reply {
	q := hr.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	pages := max((len(items)+limit-1)/limit, 1)
	from, to := min((page-1)*limit, len(items)), min(page*limit, len(items))
	out := append([]any{}, items[from:to]...)
	link := func(p int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		v.Set("limit", strconv.Itoa(limit))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.srv.URL, hr.URL.Path, v.Encode(), rel)
	}
	var links []string
	if page < pages {
		links = append(links, link(page+1, "next"), link(pages, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	h := http.Header{"X-Total-Count": {strconv.Itoa(len(items))}}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ","))
	}
	return reply{status: http.StatusOK, body: out, header: h}
}

package fakegithub

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
)

func readBody(hr *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(hr.Body, 1<<20))
}

// list is GET /repos/{o}/{r}/pulls: state (default open) and head
// ("owner:branch") filter as on GitHub.
func (s *Server) list(r *repo, hr *http.Request) reply {
	q := hr.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	owner, _, _ := strings.Cut(r.fullName, "/")
	out := []map[string]any{}
	for _, p := range r.pulls {
		if state != "all" && p.State != state {
			continue
		}
		if h := q.Get("head"); h != "" && h != owner+":"+p.Head {
			continue
		}
		out = append(out, s.pullJSON(r, p))
	}
	return reply{status: http.StatusOK, body: out}
}

type newPull struct {
	Title *string `json:"title"`
	Head  *string `json:"head"`
	Base  *string `json:"base"`
	Body  *string `json:"body"`
	Draft *bool   `json:"draft"`
}

// create is POST /repos/{o}/{r}/pulls, validated as GitHub does.
func (s *Server) create(r *repo, body []byte) reply {
	if !r.push {
		return message(http.StatusForbidden, "Resource not accessible by personal access token")
	}
	var np newPull
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&np); err != nil {
		return message(http.StatusBadRequest, "Problems parsing JSON")
	}
	for field, v := range map[string]*string{"title": np.Title, "head": np.Head, "base": np.Base} {
		if v == nil || *v == "" {
			return invalid(map[string]any{"resource": "PullRequest", "field": field, "code": "missing_field"})
		}
	}
	owner, _, _ := strings.Cut(r.fullName, "/")
	head := strings.TrimPrefix(*np.Head, owner+":")
	headSHA, baseSHA := branchSHA(r.gitDir, head), branchSHA(r.gitDir, *np.Base)
	switch {
	case headSHA == "":
		return invalid(map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
	case baseSHA == "":
		return invalid(map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
	case !ahead(r.gitDir, baseSHA, headSHA):
		return invalid(map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between " + *np.Base + " and " + head})
	}
	for _, p := range r.pulls {
		if p.State == "open" && p.Head == head {
			return invalid(map[string]any{"resource": "PullRequest", "code": "custom",
				"message": "A pull request already exists for " + owner + ":" + head + "."})
		}
	}
	p := &Pull{Number: len(r.pulls) + 1, Title: *np.Title, Head: head, Base: *np.Base, State: "open"}
	if np.Body != nil {
		p.Body = *np.Body
	}
	r.pulls = append(r.pulls, p)
	return reply{status: http.StatusCreated, body: s.pullJSON(r, p)}
}

// ahead: head has a commit base does not.
func ahead(gitDir, base, head string) bool {
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-list", "--count", base+".."+head).Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return err == nil && n > 0
}

// edit is PATCH /repos/{o}/{r}/pulls/{n}: title, body and state.
func (s *Server) edit(r *repo, number string, body []byte) reply {
	n, err := strconv.Atoi(number)
	if err != nil || n < 1 || n > len(r.pulls) {
		return message(http.StatusNotFound, "Not Found")
	}
	var upd struct{ Title, Body, State *string }
	if json.Unmarshal(body, &upd) != nil {
		return message(http.StatusBadRequest, "Problems parsing JSON")
	}
	p := r.pulls[n-1]
	if upd.Title != nil {
		p.Title = *upd.Title
	}
	if upd.Body != nil {
		p.Body = *upd.Body
	}
	if upd.State != nil {
		if *upd.State != "open" && *upd.State != "closed" {
			return invalid(map[string]any{"resource": "PullRequest", "field": "state", "code": "invalid"})
		}
		p.State = *upd.State
	}
	return reply{status: http.StatusOK, body: s.pullJSON(r, p)}
}

package fakegitea

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The fake answers as Gitea does at the HTTP level: error bodies with
// message and url, 401 for a bad token, 404 for an unknown repository or
// route, 422 for a body it cannot bind, 409 for a second pull request,
// and a Link header with X-Total-Count on a paged list.
func TestAnswersLikeGitea(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", bare(t), true)
	for _, c := range []struct {
		method, path, auth, body string
		status                   int
		words                    string
	}{
		{"GET", "version", "", "", 200, `"version":"` + Version + `"`},
		{"GET", "repos/acme/r", "token nope", "", 401, "user does not exist"},
		{"GET", "repos/acme/r", "", "", 401, "user does not exist"},
		{"GET", "repos/acme/x", "token tok", "", 404, "repository does not exist"},
		{"GET", "repos/acme/r/nothing", "token tok", "", 404, "not found"},
		{"GET", "repos/acme/r", "token tok", "", 200, `"push":true`},
		{"POST", "repos/acme/r/pulls", "token tok", `{}`, 422, "Required"},
		{"POST", "repos/acme/r/pulls", "token tok", `{not json`, 422, ""},
		{"POST", "repos/acme/r/pulls", "token tok", `{"head":"nope","base":"main","title":"t"}`, 404, "branch nope does not exist"},
		{"POST", "repos/acme/r/pulls", "token tok", `{"head":"h9/x","base":"main","title":"t"}`, 201, `"number":1`},
		{"POST", "repos/acme/r/pulls", "token tok", `{"head":"h9/x","base":"main","title":"t"}`, 409, "already exists"},
		{"POST", "repos/acme/r/issues/0/comments", "token tok", `{}`, 422, "Required"},
		{"POST", "repos/acme/r/pulls/1/comments/5/replies", "token tok", `{"body":"x"}`, 404, "not found"},
		{"GET", "repos/acme/r/pulls?state=open&limit=1", "Bearer tok", "", 200, `"head"`},
	} {
		req, _ := http.NewRequest(c.method, s.URL()+c.path, strings.NewReader(c.body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.words) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, resp.StatusCode, b, c.status, c.words)
		}
		if resp.StatusCode >= 400 {
			var e struct{ Message, URL string }
			if json.Unmarshal(b, &e) != nil || e.Message == "" || !strings.HasSuffix(e.URL, "/api/swagger") {
				t.Errorf("%s %s: error body %s, want message and url", c.method, c.path, b)
			}
		}
	}
	for i := 0; i < 3; i++ {
		s.AddComment("acme/r", 1, "alice", "c")
	}
	req, _ := http.NewRequest("GET", s.URL()+"repos/acme/r/issues/1/timeline?limit=2", nil)
	req.Header.Set("Authorization", "token tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if link := resp.Header.Get("Link"); resp.Header.Get("X-Total-Count") != "3" || !strings.Contains(link, `page=2`) || !strings.Contains(link, `rel="next"`) {
		t.Errorf("paging headers: total %q, link %q", resp.Header.Get("X-Total-Count"), link)
	}
}

// Git over HTTP takes the token as the password with any user name, or
// as the user name; anything else is a 401 git reports.
func TestGitOverHTTP(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", bare(t), true)
	host := strings.TrimPrefix(s.WebURL(), "http://")
	for userinfo, want := range map[string]bool{"x-access-token:tok": true, "tok:x-oauth-basic": true, "x-access-token:wrong": false} {
		cmd := exec.Command("git", "ls-remote", "http://"+userinfo+"@"+host+"/acme/r.git")
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if got := err == nil && strings.Contains(string(out), "refs/heads/h9/x"); got != want {
			t.Errorf("ls-remote as %s: %v, %s; want success %v", userinfo, err, out, want)
		}
	}
}

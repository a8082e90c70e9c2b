package fakegithub

import (
	"net/http"
	"strings"
	"testing"
)

// The fake answers as GitHub does: 401 for a bad token, 422 with the
// missing field, 404 for an unknown repository.
func TestAnswersLikeGitHub(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.AddRepo("acme/r", t.TempDir(), true)
	for _, c := range []struct {
		method, path, auth, body string
		status                   int
		words                    string
	}{
		{"GET", "repos/acme/r", "Bearer nope", "", 401, "Bad credentials"},
		{"GET", "repos/acme/r", "", "", 401, "Bad credentials"},
		{"GET", "repos/acme/x", "Bearer tok", "", 404, "Not Found"},
		{"GET", "repos/acme/r", "Bearer tok", "", 200, `"push":true`},
		{"POST", "repos/acme/r/pulls", "Bearer tok", `{"head":"h9/x","base":"main"}`, 422, `"field":"title"`},
		{"POST", "repos/acme/r/pulls", "Bearer tok", `{"title":"t","head":"h9/x","base":"main"}`, 422, `"field":"head"`},
		{"POST", "repos/acme/r/pulls", "Bearer tok", `{not json`, 400, "Problems parsing JSON"},
		{"GET", "repos/acme/r/pulls?head=acme:h9/x", "token tok", "", 200, "[]"},
	} {
		req, _ := http.NewRequest(c.method, s.URL()+c.path, strings.NewReader(c.body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(b.String(), c.words) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, resp.StatusCode, b.String(), c.status, c.words)
		}
	}
}

package fakegitlab

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// reply is an answer: a status and a JSON body, or a raw one.
type reply struct {
	status int
	body   any
	header http.Header
	raw    []byte // a body that is not JSON (traces, "Retry later")
}

// message is GitLab's error body: {"message": "404 Project Not Found"}.
func message(status int, msg string) reply {
	return reply{status: status, body: map[string]any{"message": msg}}
}

// notFound is GitLab's answer for a route it does not have.
func notFound() reply {
	return reply{status: http.StatusNotFound, body: map[string]any{"error": "404 Not Found"}}
}

func ok(body any) reply { return reply{status: http.StatusOK, body: body} }

func readBody(hr *http.Request) ([]byte, error) {
	defer hr.Body.Close()
	return io.ReadAll(io.LimitReader(hr.Body, 1<<20))
}

// params is a request's parameters: GitLab reads them from the query,
// a JSON body or a form body alike.
func params(hr *http.Request, body []byte) map[string]string {
	out := map[string]string{}
	for k, v := range hr.URL.Query() {
		out[k] = v[0]
	}
	if strings.HasPrefix(hr.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			for k, v := range m {
				if str, isStr := v.(string); isStr {
					out[k] = str
				} else if v != nil {
					data, _ := json.Marshal(v)
					out[k] = string(data)
				}
			}
		}
	} else if form, err := url.ParseQuery(string(body)); err == nil {
		for k, v := range form {
			out[k] = v[0]
		}
	}
	return out
}

// page is one page of a list (per_page default 20, at most 100; page
// from 1) with GitLab's pagination headers.
func page(hr *http.Request, all []any) reply {
	q := hr.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 20
	}
	per = min(per, 100)
	n, _ := strconv.Atoi(q.Get("page"))
	n = max(n, 1)
	out := []any{}
	if lo := (n - 1) * per; lo < len(all) {
		out = all[lo:min(lo+per, len(all))]
	}
	last := max((len(all)+per-1)/per, 1)
	h := http.Header{"X-Page": {strconv.Itoa(n)}, "X-Per-Page": {strconv.Itoa(per)}, "X-Total": {strconv.Itoa(len(all))},
		"X-Total-Pages": {strconv.Itoa(last)}, "X-Next-Page": {""}, "X-Prev-Page": {""}}
	link := func(p int, rel string) string {
		v := hr.URL.Query()
		v.Set("page", strconv.Itoa(p))
		v.Set("per_page", strconv.Itoa(per))
		return "<http://" + hr.Host + hr.URL.EscapedPath() + "?" + v.Encode() + `>; rel="` + rel + `"`
	}
	links := []string{}
	if n < last {
		h.Set("X-Next-Page", strconv.Itoa(n+1))
		links = append(links, link(n+1, "next"))
	}
	if n > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(n-1))
		links = append(links, link(n-1, "prev"))
	}
	links = append(links, link(1, "first"), link(last, "last"))
	h.Set("Link", strings.Join(links, ", "))
	return reply{status: http.StatusOK, body: out, header: h}
}

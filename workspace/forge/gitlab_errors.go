package forge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// The GitLab library answers a 404 with a bare ErrNotFound and drops the
// body: bodyKeeper keeps the body of every error answer for the call that
// asked (keptKey in its context), so h9 can say GitLab's own words
// ("404 Project Not Found").
type bodyKeeper struct{ next http.RoundTripper }

type keptKey struct{}

type keptBody struct{ data []byte }

func (b bodyKeeper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	kept, _ := req.Context().Value(keptKey{}).(*keptBody)
	if kept == nil {
		return resp, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	kept.data = data
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

func transportOf(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// gitlabWords reads GitLab's error body: {"message": "404 Project Not
// Found"}, {"message": ["…"]}, {"message": {"field": ["…"]}} or
// {"error": "…", "error_description": "…"}.
func gitlabWords(data []byte) string {
	var body struct {
		Message     any    `json:"message"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(data, &body) != nil {
		return short(string(data), 300)
	}
	var parts []string
	if m := flatten(body.Message); m != "" {
		parts = append(parts, m)
	}
	for _, s := range []string{body.Error, body.Description} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return short(strings.Join(parts, ": "), 300)
}

func flatten(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flatten(e))
		}
		return strings.Join(out, "; ")
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(out, fmt.Sprintf("%s %s", k, flatten(e)))
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

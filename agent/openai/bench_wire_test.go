package openai

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// BenchmarkReadAnswer is the CPU cost of reading one answer, the fake's
// bytes captured once, plain and streamed: the part of streaming's cost
// that is h9's own, without sockets or the fake.
func BenchmarkReadAnswer(b *testing.B) {
	for _, tc := range []struct {
		name  string
		reply fakemodel.Reply
	}{
		{"tool-call", fakemodel.ToolCall("todo_write", `{"todos":[{"id":"1","content":"write the handler","status":"in_progress"}]}`)},
		{"text-400B", fakemodel.Text(strings.Repeat("All tests pass. ", 25))},
	} {
		for _, stream := range []bool{false, true} {
			body, contentType := captureAnswer(b, tc.reply, stream)
			name := tc.name + map[bool]string{false: "/plain", true: "/stream"}[stream]
			b.Run(name, func(b *testing.B) {
				m := &Client{}
				resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {contentType}}}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.read(resp, bytes.NewReader(body), nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(body)), "bytes")
			})
		}
	}
}

// captureAnswer is the fake's answer to reply as bytes.
func captureAnswer(b *testing.B, reply fakemodel.Reply, stream bool) ([]byte, string) {
	b.Helper()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(reply)
	req := `{"model":"m","messages":[{"role":"user","content":"go"}]`
	if stream {
		req += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(req+"}"))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return body, resp.Header.Get("Content-Type")
}

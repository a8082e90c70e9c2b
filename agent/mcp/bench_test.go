package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/mcp/mcptest"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// BenchmarkMCPCall compares one tools/call of the same loopback server made
// by h9 (through the manager: arguments checked, deadline, result text,
// scrubbing, metrics) with the same call as bare HTTP (a POST of the
// JSON-RPC request on an initialised session, its body read).
func BenchmarkMCPCall(b *testing.B) {
	srv := mcptest.NewRemote(token)
	defer srv.Close()
	b.Run("direct_http", func(b *testing.B) {
		sid := rawSession(b, srv.URL)
		body := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		report(b, func() {
			res := rawPost(b, srv.URL, sid, body)
			if !bytes.Contains(res, []byte("echo: hi")) {
				b.Fatalf("direct call: %s", res)
			}
		})
	})
	b.Run("h9_mcp", func(b *testing.B) {
		servers, err := mcp.Parse([]byte("servers:\n- name: team\n  url: "+srv.URL+"\n  headers_env: {Authorization: T}\n"),
			func(string) (string, bool) { return "Bearer " + token, true })
		if err != nil {
			b.Fatal(err)
		}
		m := mcp.New(mcp.Options{Servers: servers})
		defer m.Close()
		m.Start()
		var echo mcp.Tool
		for _, tl := range m.Tools(context.Background(), mcp.Scope{}).Tools {
			if tl.Name == "team__echo" {
				echo = tl
			}
		}
		if echo.Call == nil {
			b.Fatal("team__echo not offered")
		}
		report(b, func() {
			if res := echo.Call(context.Background(), `{"text":"hi"}`); res.Output != "echo: hi" {
				b.Fatalf("h9 call: %+v", res)
			}
		})
	})
}

// BenchmarkStdioFirstCall is a stdio server's first call in a session's
// sandbox, its start, initialisation and listing included, then its stop,
// against `bash -c true` in the same sandbox; and a later call of the
// session's kept process. Under bubblewrap and in the Landlock mode.
func BenchmarkStdioFirstCall(b *testing.B) {
	for _, sandbox := range []string{"bwrap", "landlock"} {
		b.Run(sandbox, func(b *testing.B) { benchStdioIn(b, sandbox) })
	}
}

func benchStdioIn(b *testing.B, sandbox string) {
	needSandbox(b, sandbox)
	dir := b.TempDir()
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "workspaces"), Sandbox: sandbox})
	if err != nil {
		b.Fatal(err)
	}
	ws, err := wsm.Open("s1")
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	os.MkdirAll(filepath.Join(ws.Dir(), ".mcp"), 0o755)
	buildStdioServer(b, filepath.Join(ws.Dir(), ".mcp"))
	servers := []mcp.Server{{ServerConfig: mcp.ServerConfig{Name: "local", Command: "./.mcp/stdioserver"}}}
	scope := mcp.Scope{SessionID: "s1", Mode: planning.PlanModeDefault, Workspace: func() (*workspace.Workspace, error) { return ws, nil }}
	b.Run("bash_true", func(b *testing.B) {
		report(b, func() {
			if res, err := ws.Bash(context.Background(), "true", workspace.BashOptions{}); err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %+v", err, res)
			}
		})
	})
	b.Run("stdio_first_call", func(b *testing.B) {
		report(b, func() {
			// A fresh manager each time: no cached tool list, so the
			// process starts to list them, as on a session's first use.
			m := mcp.New(mcp.Options{Servers: servers})
			set := m.Tools(context.Background(), scope)
			res := callEcho(b, set)
			set.Close()
			m.Close()
			if res.Output != "echo: hi" {
				b.Fatalf("stdio call: %+v", res)
			}
		})
	})
	b.Run("stdio_later_call", func(b *testing.B) {
		m := mcp.New(mcp.Options{Servers: servers})
		defer m.Close()
		set := m.Tools(context.Background(), scope)
		callEcho(b, set)
		set.Close() // the session's process is kept, as between runs
		report(b, func() {
			set := m.Tools(context.Background(), scope)
			res := callEcho(b, set)
			set.Close()
			if res.Output != "echo: hi" {
				b.Fatalf("stdio call: %+v", res)
			}
		})
	})
}

func callEcho(b *testing.B, set mcp.Set) mcp.Result {
	for _, tl := range set.Tools {
		if tl.Name == "local__echo" {
			return tl.Call(context.Background(), `{"text":"hi"}`)
		}
	}
	b.Fatal("local__echo not offered")
	return mcp.Result{}
}

// report runs f b.N times and reports the p50 and p90 of its durations.
func report(b *testing.B, f func()) {
	b.Helper()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		f()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}

// rawSession initialises an MCP session by hand and returns its id.
func rawSession(b *testing.B, url string) string {
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(init))
	setHeaders(req, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatalf("no session id (status %s)", resp.Status)
	}
	rawPost(b, url, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

func rawPost(b *testing.B, url, sid string, body []byte) []byte {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	setHeaders(req, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s: %s", resp.Status, strings.TrimSpace(string(out)))
	}
	return out
}

func setHeaders(req *http.Request, sid string) {
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
}

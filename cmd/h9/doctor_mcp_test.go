package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/mcp/mcptest"
)

// doctor lists each MCP server: connected with its tool count, or why not,
// and never prints a header's value.
func TestDoctorMCPServers(t *testing.T) {
	const tok = "doctor-mcp-token-0123456789"
	srv := mcptest.NewRemote(tok)
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + l.Addr().String() + "/mcp"
	l.Close() // nothing listens there now
	yaml := "servers:\n- name: up\n  url: " + srv.URL + "\n  headers_env: {Authorization: T}\n- name: down\n  url: " + downURL + "\n- name: local\n  command: ./srv\n"
	servers, err := mcp.Parse([]byte(yaml), func(string) (string, bool) { return "Bearer " + tok, true })
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{mcp: servers}
	f := checkMCP(context.Background(), cfg)
	var out strings.Builder
	printFinding(&out, secretsOf(cfg), "MCP servers", f)
	text := out.String()
	for _, want := range []string{"not answering: down", "✓ up (remote): connected to " + srv.URL + ", ", " tools",
		"✗ down (remote): " + downURL + ": not connected", "connection refused", "local (stdio)"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor says:\n%s\nwithout %q", text, want)
		}
	}
	if f.verdict != verdictWarn || strings.Contains(text, tok) {
		t.Errorf("verdict %v; token shown: %v", f.verdict, strings.Contains(text, tok))
	}
	if f := checkMCP(context.Background(), Config{}); f.verdict != verdictOK {
		t.Errorf("none configured: %+v", f)
	}
}

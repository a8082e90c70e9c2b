package main

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

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

// doctor starts each stdio server once in a throwaway sandboxed workspace:
// one that works gives its tool count, a command that does not exist and
// one that speaks no MCP are ✗ with their stderr; nothing is left behind,
// neither a process nor the workspace.
func TestDoctorStartsStdioMCPServers(t *testing.T) {
	testenv.Need(t, "bwrap")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where doctor makes its workspaces
	bin := filepath.Join(t.TempDir(), "stdioserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../agent/mcp/testdata/stdioserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	yaml := "servers:\n- name: works\n  command: " + bin + "\n- name: missing\n  command: /nonexistent/h9-mcp-server\n" +
		"- name: talker\n  command: \"echo not MCP; echo 'talker: no configuration' >&2\"\n"
	servers, err := mcp.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{mcp: servers, Sandbox: "bwrap", DataDir: t.TempDir(), SandboxROPaths: []string{filepath.Dir(bin)}}
	f := checkMCP(context.Background(), cfg)
	var out strings.Builder
	printFinding(&out, secretsOf(cfg), "MCP servers", f)
	text := out.String()
	if !regexp.MustCompile(`✓ works \(stdio\): stdio server "` + regexp.QuoteMeta(bin) + `", [1-9][0-9]* tools;`).MatchString(text) {
		t.Errorf("doctor says:\n%s\nwithout the working server's tool count", text)
	}
	for _, want := range []string{"not answering: missing, talker",
		`✗ missing (stdio): stdio server "/nonexistent/h9-mcp-server": did not answer as an MCP server`, "No such file or directory",
		`✗ talker (stdio): stdio server "echo not MCP;`, "talker: no configuration"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor says:\n%s\nwithout %q", text, want)
		}
	}
	if f.verdict != verdictWarn {
		t.Errorf("verdict %v, want a warning", f.verdict)
	}
	if n := processesOf(bin); n != 0 {
		t.Errorf("%d stdio server processes left after doctor", n)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "h9-doctor-mcp-*")); len(left) > 0 {
		t.Errorf("doctor left its workspaces: %v", left)
	}
}

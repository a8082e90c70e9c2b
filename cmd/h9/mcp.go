package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
)

// loadMCP reads and checks H9_MCP_FILE: one line naming the setting and
// the server on any mistake.
func (c *Config) loadMCP() error {
	if c.MCPFile == "" {
		return nil
	}
	if c.MCPTimeout <= 0 {
		return invalid("H9_MCP_TIMEOUT must be positive (got %s)", c.MCPTimeout)
	}
	servers, err := mcp.LoadFile(c.MCPFile, os.LookupEnv)
	if err != nil {
		return invalid("%v", err)
	}
	c.mcp = servers
	return nil
}

// mcpHeaderValues are the header values of the MCP servers: secrets, never
// logged or printed.
func mcpHeaderValues(c Config) []string {
	var out []string
	for _, s := range c.mcp {
		for _, v := range s.Headers {
			out = append(out, v)
		}
	}
	return out
}

// mcpSecretEnvNames are the variables H9_MCP_FILE's headers_env names,
// hidden from h9's environment image at start like h9's own secrets. It
// is read before the configuration (secrets.go), once.
var mcpSecretEnvNames = sync.OnceValue(func() []string {
	path := os.Getenv("H9_MCP_FILE")
	if path == "" {
		return nil
	}
	return mcp.SecretNames(path)
})

// newMCP is the manager of the configured servers (none: a manager that
// offers nothing).
func (c Config) newMCP(log *slog.Logger, metrics *promMetrics) *mcp.Manager {
	opts := mcp.Options{Servers: c.mcp, CallTimeout: c.MCPTimeout, Logger: log.With("component", "mcp")}
	if metrics != nil {
		opts.Metrics = metrics
	}
	return mcp.New(opts)
}

// mcpDoctorWait is how long doctor waits for each server: a remote one to
// connect, a stdio one to start, answer and list its tools.
const mcpDoctorWait = 10 * time.Second

// checkMCP lists each server with its tool count, or why not: a remote
// one connected to, a stdio one started once in a throwaway sandboxed
// workspace. A server that is down is a warning: h9 starts anyway.
func checkMCP(ctx context.Context, cfg Config) finding {
	if len(cfg.mcp) == 0 {
		return ok("none configured (H9_MCP_FILE)")
	}
	open, cleanup := mcpProbeWorkspaces(cfg)
	defer cleanup() // after Close: Check has stopped every server it started
	m := cfg.newMCP(slog.New(slog.DiscardHandler), nil)
	defer m.Close()
	statuses := m.Check(ctx, mcpDoctorWait, open)
	f := ok("%d configured", len(statuses))
	var down []string
	for _, s := range statuses {
		mark := "✓"
		if !s.OK {
			mark = "✗"
			down = append(down, s.Name)
		}
		f.more = append(f.more, fmt.Sprintf("%s %s (%s): %s", mark, s.Name, s.Kind, m.Scrub(s.Line)))
	}
	if len(down) > 0 {
		f.verdict = verdictWarn
		f.detail = fmt.Sprintf("%d configured, not answering: %s", len(statuses), strings.Join(down, ", "))
		f.hint = "their tools are offered once they answer"
	}
	return f
}

// mcpProbeWorkspaces opens a throwaway workspace for each stdio server
// doctor starts, made as a session's is (the sandbox and its limits, the
// template, the read-only paths, the secrets scrubbed, the network of a
// session without a repository), under a temporary root that cleanup
// removes once the servers are stopped. Without stdio servers it makes
// nothing; a sandbox that cannot be made is each server's reason.
func mcpProbeWorkspaces(cfg Config) (open func() (*workspace.Workspace, error), cleanup func()) {
	if !slices.ContainsFunc(cfg.mcp, func(s mcp.Server) bool { return !s.Remote() }) {
		return nil, func() {}
	}
	refuse := func(err error) func() (*workspace.Workspace, error) {
		return func() (*workspace.Workspace, error) { return nil, err }
	}
	root, err := os.MkdirTemp("", "h9-doctor-mcp-")
	if err != nil {
		return refuse(fmt.Errorf("cannot create a probe directory: %w", err)), func() {}
	}
	closers := []func(){func() { os.RemoveAll(root) }}
	cleanup = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	wc := cfg.workspaceConfig(filepath.Join(root, "workspaces"))
	wc.Secrets = cfg.secretList()
	if cfg.networkWanted() {
		gw, err := sessionlessGateway(cfg)
		if err != nil {
			return refuse(err), cleanup
		}
		closers = append(closers, func() { gw.Close() })
		wc.Network = gw
	}
	wsm, err := workspace.NewManager(wc)
	if err != nil {
		return refuse(err), cleanup
	}
	var n atomic.Int64
	return func() (*workspace.Workspace, error) {
		return wsm.Open(fmt.Sprintf("doctor/mcp/%d", n.Add(1)))
	}, cleanup
}

// sessionlessGateway is h9's egress proxy with the allow list of a session
// without a repository (H9_NETWORK_ALLOW, H9_NETWORK_PRESETS).
func sessionlessGateway(cfg Config) (*egress.Gateway, error) {
	pol, err := egress.NewPolicy(cfg.NetworkAllow, cfg.NetworkPresets)
	if err != nil {
		return nil, err
	}
	return egress.New(egress.Config{Policy: func(string) (egress.Policy, error) { return pol, nil }})
}

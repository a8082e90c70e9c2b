package main

import (
	"log/slog"
	"os"
	"sync"

	"github.com/h9-app/h9/agent/mcp"
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
// is read before the configuration (secretenv.go), once.
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

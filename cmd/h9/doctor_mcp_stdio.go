package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
)

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

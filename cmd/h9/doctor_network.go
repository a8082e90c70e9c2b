package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
)

// checkEgress runs the egress proxy end to end: a sandboxed command, in
// its own network namespace, reaches an allowed loopback listener through
// the proxy and is refused another.
func checkEgress(ctx context.Context, cfg Config) finding {
	if !cfg.networkWanted() {
		return ok("no allow list: the agent's commands have no network")
	}
	allowed, err := doctorListener()
	if err != nil {
		return failed("check that h9 may listen on 127.0.0.1", "%v", err)
	}
	defer allowed.Close()
	other, err := doctorListener()
	if err != nil {
		return failed("check that h9 may listen on 127.0.0.1", "%v", err)
	}
	defer other.Close()
	pol, err := egress.NewPolicy([]string{allowed.Addr().String()}, nil)
	if err != nil {
		return failed("report this as a bug", "%v", err)
	}
	gw, err := egress.New(egress.Config{Policy: func(string) (egress.Policy, error) { return pol, nil }})
	if err != nil {
		return failed("check TMPDIR", "%v", err)
	}
	defer gw.Close()
	root, err := os.MkdirTemp("", "h9-doctor-net-")
	if err != nil {
		return failed("check TMPDIR", "cannot create a probe directory: %v", err)
	}
	defer os.RemoveAll(root)
	wc := cfg.workspaceConfig(filepath.Join(root, "workspaces"))
	wc.Template, wc.Network = "", gw
	m, err := workspace.NewManager(wc)
	if err != nil {
		return failed(bwrapHint, "%v", err)
	}
	ws, err := m.Open("doctor/network/probe")
	if err != nil {
		return failed("check H9_DATA_DIR", "%v", err)
	}
	defer ws.Close()
	return probeNetwork(ctx, ws, allowed.Addr().String(), other.Addr().String())
}

// probeNetwork asks the proxy for both listeners from inside the sandbox.
func probeNetwork(ctx context.Context, ws *workspace.Workspace, allowed, other string) finding {
	connect := func(addr string) string {
		return fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' >&3 && read -r line <&3 && echo "%s ${line}"; exec 3>&-;`, addr, addr, addr)
	}
	res, err := ws.Bash(ctx, connect(allowed)+connect(other), workspace.BashOptions{})
	if err != nil {
		return failed(bwrapHint, "running the probe: %v", err)
	}
	out := res.Output
	reached := strings.Contains(out, allowed+" HTTP/1.1 200")
	refused := strings.Contains(out, other+" HTTP/1.1 403")
	if !reached || !refused {
		return failed("the proxy does not behave as documented (docs/network.md): do not give the agent network like this",
			"through h9's proxy the allowed listener answered %v and the other was refused %v: %s", reached, refused, strings.TrimSpace(out))
	}
	return ok("a sandboxed command reached an allowed loopback listener (%s) through h9's proxy and was refused another (%s) with 403", allowed, other)
}

func doctorListener() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln, nil
}

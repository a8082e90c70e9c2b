package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/h9-app/h9/workspace/egress"
)

// Network gives a session's execution-mode commands their only way out:
// h9's egress proxy (workspace/egress), on a unix socket in a directory
// the sandbox does not otherwise see (ARCHITECTURE.md, "Network for the
// agent").
type Network interface {
	// Route opens the way out for one command: the directory holding its
	// proxy socket, and what to call once the command is done. Dir ""
	// means the session has no allow list: no network, as without one.
	Route(sessionID, command string) (dir string, done func(), err error)
}

// Inside the sandbox: the socket's directory, h9's own binary as the
// forwarder, and the loopback port the forwarder listens on.
const (
	egressDir       = "/.h9/egress"
	egressForwarder = "/.h9/" + forwarderName
	egressSocket    = egressDir + "/" + egress.SocketName
	egressLoopback  = egressDir + "/" + egress.LoopbackName
	egressPort      = 3128
	egressListen    = "127.0.0.1:3128"
	egressProxyURL  = "http://" + egressListen
)

// errNetworkNeedsBwrap: without bwrap there is no network namespace to
// keep a command in, and never a silent fallback to the host's network.
var errNetworkNeedsBwrap = errors.New("a network allow list needs the bubblewrap sandbox: " +
	"without it commands would have the host's network, not only h9's proxy")

// useNetwork checks that Config.Network can be honoured here and finds the
// binary the forwarder runs from.
func (s *sandbox) useNetwork(n Network) error {
	if n == nil {
		return nil
	}
	if s.level != LevelBwrap {
		return fmt.Errorf("%w: %w", ErrSandboxUnavailable, errNetworkNeedsBwrap)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("finding h9's binary for the network forwarder: %w", err)
	}
	s.network, s.exe = n, exe
	return nil
}

// route asks for the command's way out when it may have one: execution
// mode under bwrap, not setup (which has the host's network).
func (w *Workspace) route(command string, opts BashOptions) (string, func(), error) {
	if w.sandbox.network == nil || opts.ReadOnly || opts.Network || w.sandbox.level != LevelBwrap {
		return "", func() {}, nil
	}
	dir, done, err := w.sandbox.network.Route(w.session, command)
	if err != nil {
		return "", nil, fmt.Errorf("opening the network proxy: %w", err)
	}
	if done == nil {
		done = func() {}
	}
	return dir, done, nil
}

// egressBinds show the command its socket's directory and the forwarder.
func (s *sandbox) egressBinds(p place) []string {
	if p.egress == "" {
		return nil
	}
	return []string{"--ro-bind", p.egress, egressDir, "--ro-bind", s.exe, egressForwarder}
}

// egressEnv points every client at the forwarder; the namespace's own
// loopback stays direct (a command's test server), and so do the allow
// list's loopback entries, which the forwarder listens on at their own
// address (listenLoopback).
func egressEnv(p place) []string {
	if p.egress == "" {
		return nil
	}
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + egressProxyURL, "HTTPS_PROXY=" + egressProxyURL,
		"http_proxy=" + egressProxyURL, "https_proxy=" + egressProxyURL,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		forwarderEnv + "=1",
	}
}

// egressArgv runs the command under the forwarder.
func egressArgv(p place, argv []string) []string {
	if p.egress == "" {
		return argv
	}
	return append([]string{egressForwarder}, argv...)
}

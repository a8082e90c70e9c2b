package main

import (
	"context"
	"net"
)

// checkHTTP proves H9_HTTP_ADDR can be listened on (nothing else holds
// it), so h9 will not stop at start over it.
func checkHTTP(_ context.Context, cfg Config) finding {
	if cfg.HTTPAddr == "" {
		return ok("off (set H9_HTTP_ADDR to serve /healthz, /readyz and /metrics)")
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return failed("choose a free address for H9_HTTP_ADDR, or stop what listens there (a running h9?)",
			"cannot listen on %s: %v", cfg.HTTPAddr, err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return failed("check the network set-up", "closing %s: %v", addr, err)
	}
	return ok("%s is free: /healthz, /readyz and /metrics will be served there", cfg.HTTPAddr)
}

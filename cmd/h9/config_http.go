package main

import (
	"net"
	"strconv"
	"strings"
)

// checkHTTPAddr accepts an empty H9_HTTP_ADDR (off) or host:port with a
// numeric port, as net.Listen takes it (":9090", "127.0.0.1:9090",
// "[::1]:9090"; port 0 picks a free one). Whether the address can be
// bound is known only when h9 listens, at start.
func checkHTTPAddr(v string) error {
	if v == "" {
		return nil
	}
	const form = "H9_HTTP_ADDR must be host:port or :port, e.g. :9090 (got %q)"
	host, port, err := net.SplitHostPort(v)
	if err != nil || strings.ContainsAny(host, "/ ") {
		return invalid(form, v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return invalid("H9_HTTP_ADDR's port must be a number from 0 to 65535 (got %q)", v)
	}
	return nil
}

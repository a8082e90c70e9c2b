package egress

import (
	"net"
	"net/netip"
)

// refusedPrefixes are the ranges no command reaches unless an entry names
// the exact address: this host, private networks, link-local (cloud
// metadata at 169.254.169.254), shared address space, and everything that
// is not a unicast address on the public internet.
var refusedPrefixes = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
	"2001::/32", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// refusedRange reports whether addr lies in a refused range or is one of
// this host's own addresses (h9's listeners among them).
func refusedRange(addr netip.Addr, own map[netip.Addr]bool) bool {
	addr = addr.Unmap()
	if own[addr] {
		return true
	}
	for _, p := range refusedPrefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// hostAddrs are the addresses of this host's interfaces: a public address
// of the host is h9's own, and so is whatever else listens there.
func hostAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return own
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				own[ip.Unmap()] = true
			}
		}
	}
	return own
}

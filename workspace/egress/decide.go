package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Resolver turns a host name into addresses; *net.Resolver is one. Tests
// give the Gateway a fake one to play DNS rebinding.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Refused is a request h9 did not forward, and why; its text is the 403's
// body.
type Refused struct {
	HostPort string // as the command asked for it (host lower case)
	// Fixable: adding HostPort as an entry would let it through (the
	// thread's buttons offer that); false when the host is allowed but
	// resolves to a refused address.
	Fixable bool
	why     string
}

func (r *Refused) Error() string { return r.why }

// target is a checked destination: where to dial, never the name again.
type target struct {
	hostPort string
	addrs    []netip.AddrPort
}

// decide applies the policy to host:port. A name not allowed is refused
// before any resolution; an allowed name is resolved here and refused if
// any of its addresses lies in a refused range that no entry names; a
// literal IP passes only when an entry names it.
func decide(ctx context.Context, res Resolver, own map[netip.Addr]bool, pol Policy, host string, port int) (target, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	t := target{hostPort: hp}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.Zone() != "" || !pol.namesIP(ip, port) {
			return t, &Refused{HostPort: hp, Fixable: ip.Zone() == "", why: notAllowed(hp, "a literal IP address is reached only when an entry names it exactly")}
		}
		t.addrs = []netip.AddrPort{netip.AddrPortFrom(ip, uint16(port))}
		return t, nil
	}
	if checkName(host) != nil {
		return t, &Refused{HostPort: hp, why: fmt.Sprintf("h9 refused %q: not a host name.\n", hp)}
	}
	if !pol.allowsName(host, port) {
		return t, &Refused{HostPort: hp, Fixable: true, why: notAllowed(hp, "it is not on this session's network allow list")}
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return t, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return t, fmt.Errorf("resolving %s: no addresses", host)
	}
	for _, a := range addrs {
		a = a.Unmap()
		if refusedRange(a, own) && !pol.namesIP(a, port) {
			return t, &Refused{HostPort: hp, why: rebound(hp, a, port)}
		}
		t.addrs = append(t.addrs, netip.AddrPortFrom(a, uint16(port)))
	}
	return t, nil
}

func notAllowed(hp, why string) string {
	return fmt.Sprintf("h9 refused %s: %s.\n"+
		"To allow it, press Allow on the message h9 posts about it in the session's Slack thread, "+
		"or add %q to the repository's network: allow: list (H9_NETWORK_ALLOW for sessions without a repository) "+
		"in h9's configuration.\n", hp, why, hp)
}

func rebound(hp string, a netip.Addr, port int) string {
	exact := netip.AddrPortFrom(a, uint16(port)).String()
	return fmt.Sprintf("h9 refused %s: it resolves to %s, an address commands do not reach "+
		"(loopback, link-local, private ranges and this host are refused).\n"+
		"To allow it, add the exact address %q to the network: allow: list as well.\n", hp, a, exact)
}

// Package egress is h9's HTTP proxy for sandboxed commands: the only way
// out of a command's network namespace when its session has an allow list
// (ARCHITECTURE.md, "Network for the agent"). It forwards plain HTTP
// requests and CONNECT tunnels to allowed hosts, never intercepts TLS, and
// refuses everything else with a 403 that names the host.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ErrBadEntry is a malformed allow-list entry or an unknown preset.
var ErrBadEntry = errors.New("bad network entry")

// Entry is one allowed destination: a host name, every subdomain of a
// suffix (`*.example.com`), or an exact IP address; Port 0 means any port.
type Entry struct {
	Host   string     // lower case, no trailing dot; "" for an IP entry
	Suffix bool       // Host is a suffix: matches its subdomains, not itself
	IP     netip.Addr // valid for an IP entry
	Port   int
}

// presets are the named groups of hosts `presets:` and H9_NETWORK_PRESETS
// accept. packages: the public registries of Go modules, npm, PyPI,
// crates.io, Maven Central and RubyGems (docs/network.md lists them).
var presets = map[string][]string{
	"packages": {
		"proxy.golang.org", "sum.golang.org", "index.golang.org",
		"registry.npmjs.org",
		"pypi.org", "files.pythonhosted.org",
		"crates.io", "static.crates.io", "index.crates.io",
		"repo.maven.apache.org", "repo1.maven.org",
		"rubygems.org", "index.rubygems.org",
	},
}

// Presets names the presets there are, sorted.
func Presets() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// PresetHosts are the hosts of one preset (nil if there is none).
func PresetHosts(name string) []string { return slices.Clone(presets[name]) }

// ParseEntry reads `host`, `*.suffix`, `host:port`, an IP address or
// `ip:port` (`[v6]:port`).
func ParseEntry(s string) (Entry, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Entry{}, fmt.Errorf("%w: empty entry", ErrBadEntry)
	}
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		host, _, _ := strings.Cut(rest, "/")
		return Entry{}, fmt.Errorf("%w %q: write host:port, not a URL (%s rather than %s://…)", ErrBadEntry, raw, host, scheme)
	}
	host, port, err := splitPort(raw)
	if err != nil {
		return Entry{}, fmt.Errorf("%w %q: %v", ErrBadEntry, raw, err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return Entry{}, fmt.Errorf("%w %q: an address with a zone", ErrBadEntry, raw)
		}
		return Entry{IP: ip.Unmap(), Port: port}, nil
	}
	e := Entry{Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.Suffix, host = true, rest
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if err := checkName(host); err != nil {
		return Entry{}, fmt.Errorf("%w %q: %v", ErrBadEntry, raw, err)
	}
	if e.Suffix && !strings.Contains(host, ".") {
		return Entry{}, fmt.Errorf("%w %q: a wildcard needs a domain with a dot (*.example.com)", ErrBadEntry, raw)
	}
	e.Host = host
	return e, nil
}

// splitPort separates an optional port; a bare IPv6 address has none.
func splitPort(s string) (string, int, error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, errors.New("unclosed [")
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		p, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, errors.New("text after ]")
		}
		port, err := parsePort(p)
		return host, port, err
	}
	if strings.Count(s, ":") > 1 { // IPv6 without brackets: no port
		return s, 0, nil
	}
	host, p, found := strings.Cut(s, ":")
	if !found {
		return s, 0, nil
	}
	port, err := parsePort(p)
	return host, port, err
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "+") {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// checkName accepts DNS host names: labels of letters, digits, '-' and '_'.
func checkName(h string) error {
	if h == "" {
		return errors.New("no host name")
	}
	if len(h) > 253 {
		return errors.New("host name longer than 253 characters")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("empty or over-long label (want a host name such as example.com, no scheme or path)")
		}
		for _, c := range label {
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return fmt.Errorf("character %q not allowed in a host name (want host, *.suffix or host:port)", c)
			}
		}
	}
	return nil
}

// String is the entry as written in an allow list.
func (e Entry) String() string {
	host := e.Host
	switch {
	case e.IP.IsValid() && e.IP.Is6() && e.Port != 0:
		return "[" + e.IP.String() + "]:" + strconv.Itoa(e.Port)
	case e.IP.IsValid():
		host = e.IP.String()
	case e.Suffix:
		host = "*." + host
	}
	if e.Port != 0 {
		return host + ":" + strconv.Itoa(e.Port)
	}
	return host
}

func (e Entry) portOK(port int) bool { return e.Port == 0 || e.Port == port }

// matchesName: a host name entry covering host (lower case) on port.
func (e Entry) matchesName(host string, port int) bool {
	if e.IP.IsValid() || !e.portOK(port) {
		return false
	}
	if e.Suffix {
		return strings.HasSuffix(host, "."+e.Host)
	}
	return host == e.Host
}

// matchesIP: an IP entry naming exactly addr on port.
func (e Entry) matchesIP(addr netip.Addr, port int) bool {
	return e.IP.IsValid() && e.IP == addr.Unmap() && e.portOK(port)
}

// Policy is a session's allow list: the entries of its configuration, its
// presets expanded, and the hosts allowed at runtime. The zero Policy
// allows nothing.
type Policy struct {
	entries []Entry
}

// NewPolicy parses entries and expands presets; the first bad one is the
// error.
func NewPolicy(allow, presetNames []string) (Policy, error) {
	var p Policy
	for _, s := range allow {
		e, err := ParseEntry(s)
		if err != nil {
			return Policy{}, err
		}
		p.entries = append(p.entries, e)
	}
	for _, name := range presetNames {
		hosts, ok := presets[strings.ToLower(strings.TrimSpace(name))]
		if !ok {
			return Policy{}, fmt.Errorf("%w: unknown preset %q (want one of %s)", ErrBadEntry, name, strings.Join(Presets(), ", "))
		}
		for _, h := range hosts {
			p.entries = append(p.entries, Entry{Host: h})
		}
	}
	return p, nil
}

// With is the policy plus more entries.
func (p Policy) With(more ...Entry) Policy {
	return Policy{entries: append(slices.Clip(p.entries), more...)}
}

// Empty reports whether nothing is allowed: commands then get no network.
func (p Policy) Empty() bool { return len(p.entries) == 0 }

// Entries are the policy's entries, presets expanded.
func (p Policy) Entries() []Entry { return slices.Clone(p.entries) }

// LoopbackAddrs are the loopback address and port pairs the policy names
// (127.0.0.1:8081, [::1]:9000: a registry mirror on the host, a test
// server), each once. Inside the sandbox's network namespace these
// addresses are its own, so the forwarder listens on each and relays
// through the proxy to the host's (ARCHITECTURE.md, "Network for the
// agent"); an entry without a port names no one place to listen.
func (p Policy) LoopbackAddrs() []netip.AddrPort {
	var out []netip.AddrPort
	for _, e := range p.entries {
		if !e.IP.IsValid() || !e.IP.IsLoopback() || e.Port == 0 {
			continue
		}
		if ap := netip.AddrPortFrom(e.IP.Unmap(), uint16(e.Port)); !slices.Contains(out, ap) {
			out = append(out, ap)
		}
	}
	return out
}

// allowsName: some entry names host on port.
func (p Policy) allowsName(host string, port int) bool {
	for _, e := range p.entries {
		if e.matchesName(host, port) {
			return true
		}
	}
	return false
}

// namesIP: some entry names exactly addr (on port).
func (p Policy) namesIP(addr netip.Addr, port int) bool {
	for _, e := range p.entries {
		if e.matchesIP(addr, port) {
			return true
		}
	}
	return false
}

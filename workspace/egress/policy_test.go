package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	good := map[string]string{
		"Example.COM.":      "example.com",
		"*.example.com":     "*.example.com",
		"example.com:8443":  "example.com:8443",
		"10.0.0.5":          "10.0.0.5",
		"10.0.0.5:3000":     "10.0.0.5:3000",
		"[::1]:8080":        "[::1]:8080",
		"::1":               "::1",
		" registry.test:1 ": "registry.test:1",
	}
	for in, want := range good {
		e, err := ParseEntry(in)
		if err != nil || e.String() != want {
			t.Errorf("ParseEntry(%q) = %q, %v; want %q", in, e, err, want)
		}
	}
	for _, bad := range []string{"", "*", "*.com", "http://example.com", "example.com/path", "example.com:0", "example.com:70000",
		"example.com:+80", "exa mple.com", "[::1", "[::1]x", "a..b", "*.*.example.com", "fe80::1%eth0"} {
		if _, err := ParseEntry(bad); !errors.Is(err, ErrBadEntry) {
			t.Errorf("ParseEntry(%q) = %v, want ErrBadEntry", bad, err)
		}
	}
}

func TestPolicyMatching(t *testing.T) {
	p, err := NewPolicy([]string{"*.example.com", "api.test:443", "10.1.2.3:80"}, []string{"packages"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host string
		port int
		want bool
	}{
		{"a.example.com", 443, true}, {"a.b.example.com", 1, true}, {"example.com", 443, false},
		{"badexample.com", 443, false}, {"api.test", 443, true}, {"api.test", 80, false},
		{"proxy.golang.org", 443, true}, {"registry.npmjs.org", 443, true}, {"files.pythonhosted.org", 443, true},
		{"static.crates.io", 443, true}, {"repo1.maven.org", 443, true}, {"index.rubygems.org", 443, true},
	}
	for _, c := range cases {
		if got := p.allowsName(c.host, c.port); got != c.want {
			t.Errorf("allowsName(%s:%d) = %v", c.host, c.port, got)
		}
	}
	if !p.namesIP(netip.MustParseAddr("10.1.2.3"), 80) || p.namesIP(netip.MustParseAddr("10.1.2.3"), 81) {
		t.Error("an IP entry with a port must name exactly that port")
	}
	if _, err := NewPolicy(nil, []string{"everything"}); !errors.Is(err, ErrBadEntry) {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestRefusedRanges(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.2.3.4", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "224.0.0.1"} {
		if !refusedRange(netip.MustParseAddr(s), nil) {
			t.Errorf("%s is not refused", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "140.82.112.3", "2606:4700::1111"} {
		if refusedRange(netip.MustParseAddr(s), nil) {
			t.Errorf("%s is refused", s)
		}
	}
	own := map[netip.Addr]bool{netip.MustParseAddr("8.8.8.8"): true}
	if !refusedRange(netip.MustParseAddr("8.8.8.8"), own) {
		t.Error("this host's own public address must be refused")
	}
}

// LoopbackAddrs are the loopback entries with a port, each once: the
// places the forwarder listens on inside the sandbox.
func TestLoopbackAddrs(t *testing.T) {
	t.Parallel()
	pol, err := NewPolicy([]string{"127.0.0.1:8081", "[::1]:9000", "127.0.0.1", "10.0.0.1:80", "localhost:8082", "127.0.0.1:8081", "127.0.0.2:5000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ap := range pol.LoopbackAddrs() {
		got = append(got, ap.String())
	}
	if want := "127.0.0.1:8081 [::1]:9000 127.0.0.2:5000"; strings.Join(got, " ") != want {
		t.Errorf("LoopbackAddrs = %v, want %s", got, want)
	}
}

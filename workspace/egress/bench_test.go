package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/egress"
)

// benchProxyEnv makes this test binary a proxy process of its own, so
// that its memory is measured alone (BenchmarkTunnelMemory).
const benchProxyEnv = "H9_EGRESS_BENCH_PROXY"

func TestMain(m *testing.M) {
	if os.Getenv(benchProxyEnv) == "1" {
		serveBenchProxy()
		return
	}
	os.Exit(m.Run())
}

// serveBenchProxy allows 127.0.0.1, prints its socket and serves until
// stdin closes.
func serveBenchProxy() {
	pol, _ := egress.NewPolicy([]string{"127.0.0.1"}, nil)
	gw, err := egress.New(egress.Config{Policy: func(string) (egress.Policy, error) { return pol, nil }, Resolver: fakeDNS{}, MaxConns: 2000})
	if err != nil {
		panic(err)
	}
	dir, done, err := gw.Route("bench", "bench")
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.Join(dir, egress.SocketName))
	io.Copy(io.Discard, os.Stdin)
	done()
	gw.Close()
}

// blobServer serves size zero bytes at any path, without allocating.
func blobServer(b *testing.B, size int64) *net.TCPAddr {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		io.CopyN(w, zeros{}, size)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// connect opens a tunnel to addr through the proxy socket.
func connect(tb testing.TB, sock, addr string) net.Conn {
	c, err := net.Dial("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c
}

// download GETs the blob over c and returns its size.
func download(tb testing.TB, c net.Conn) int64 {
	fmt.Fprintf(c, "GET /blob HTTP/1.1\r\nHost: blob\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 64<<10), nil)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func benchSocket(b *testing.B) string {
	r := newRig(b, []string{"127.0.0.1"}, fakeDNS{}, nil)
	dir, done, err := r.gw.Route("bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(done)
	return filepath.Join(dir, egress.SocketName)
}

// BenchmarkDownload200MB: the same 200 MB from a loopback server, direct
// and through a CONNECT tunnel of the proxy; MB/s of each.
func BenchmarkDownload200MB(b *testing.B) {
	const size = 200 << 20
	addr := blobServer(b, size).String()
	sock := benchSocket(b)
	dial := map[string]func() net.Conn{
		"direct": func() net.Conn {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			return c
		},
		"proxy": func() net.Conn { return connect(b, sock, addr) },
	}
	for _, name := range []string{"direct", "proxy"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				c := dial[name]()
				if n := download(b, c); n != size {
					b.Fatalf("got %d bytes", n)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkConnectionSetup: from nothing to the first byte back from a
// loopback echo server, direct and through the proxy; p50 of each.
func BenchmarkConnectionSetup(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	addr := ln.Addr().String()
	sock := benchSocket(b)
	open := map[string]func() net.Conn{
		"direct": func() net.Conn {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			return c
		},
		"proxy": func() net.Conn { return connect(b, sock, addr) },
	}
	for _, name := range []string{"direct", "proxy"} {
		b.Run(name, func(b *testing.B) {
			var times []time.Duration
			one := make([]byte, 1)
			for b.Loop() {
				start := time.Now()
				c := open[name]()
				c.Write(one)
				if _, err := io.ReadFull(c, one); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
				c.Close()
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkTunnelMemory: the resident memory of a proxy process before and
// with 1,000 open tunnels (to an echo server in this process).
func BenchmarkTunnelMemory(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	for b.Loop() {
		idle, open := tunnelRSS(b, ln.Addr().String(), 1000)
		b.ReportMetric(idle, "idle-MiB")
		b.ReportMetric(open, "1000-tunnels-MiB")
	}
}

func tunnelRSS(b *testing.B, addr string, n int) (idle, open float64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchProxyEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	sock, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	sock = strings.TrimSpace(sock)
	idle = rssMiB(b, cmd.Process.Pid)
	conns := make([]net.Conn, 0, n)
	one := make([]byte, 1)
	for range n {
		c := connect(b, sock, addr)
		c.Write(one)
		io.ReadFull(c, one) // the tunnel carries data both ways
		conns = append(conns, c)
	}
	open = rssMiB(b, cmd.Process.Pid)
	for _, c := range conns {
		c.Close()
	}
	return idle, open
}

func rssMiB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

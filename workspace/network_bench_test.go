package workspace

import (
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/workspace/egress"
)

// pacedRate is the paced variants' server speed, bytes a second.
const pacedRate = 500_000_000

// BenchmarkSandboxDownload200MB is the whole way out, side by side in one
// run, with curl as the client:
//   - direct: curl on the host straight to a loopback server;
//   - host-copy: through h9's proxy behind a forwarder that copies the
//     bytes to the proxy's unix socket (how the forwarder worked first);
//   - host-pass: the same behind a forwarder that passes the socket to
//     the proxy (passSocket, as the forwarder does now);
//   - bare-relay, bare-splice: curl on the host through the least a
//     CONNECT relay can be (bareRelay), copying or splicing: the floor
//     for any third process in the way, h9's proxy or not;
//   - sandbox-tunnel, sandbox-forward: curl in the real sandbox, through
//     the forwarder and the proxy, in a CONNECT tunnel (as https goes) or
//     as plain HTTP forwarding;
//   - paced-direct, paced-sandbox-tunnel: direct and sandbox-tunnel from a
//     server paced to pacedRate.
//
// curl-MB/s is curl's own average speed (a sandbox's start-up is not
// counted); cpu-ms is the CPU time of the whole download (server, proxy,
// forwarder and curl), steadier than speed on a shared machine.
func BenchmarkSandboxDownload200MB(b *testing.B) {
	const size = 200 << 20
	testenv.Need(b, "bwrap")
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl not installed (apt-get install curl)")
	}
	url := "http://" + zeroServer(b, size, 0) + "/blob"
	pol, err := egress.NewPolicy([]string{"127.0.0.1"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	gw, err := egress.New(egress.Config{Policy: func(string) (egress.Policy, error) { return pol, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	speed := strings.Fields("-sS -o /dev/null -w %{size_download}:%{speed_download} " + url)
	hostCurl := func(args ...string) func() (string, error) {
		return func() (string, error) {
			out, err := exec.Command(curl, append(args, speed...)...).Output()
			return string(out), err
		}
	}
	b.Run("direct", func(b *testing.B) { benchCurl(b, size, hostCurl()) })
	paced := strings.Fields("-sS -o /dev/null -w %{size_download}:%{speed_download} http://" + zeroServer(b, size, pacedRate) + "/blob")
	for _, v := range []struct {
		name string
		hand func(c *net.TCPConn, up *net.UnixConn)
	}{{"host-copy", copyBoth}, {"host-pass", func(c *net.TCPConn, up *net.UnixConn) { passSocket(up, c) }}} {
		b.Run(v.name, func(b *testing.B) {
			proxy := hostForwarder(b, gw, v.hand)
			benchCurl(b, size, hostCurl("-p", "-x", "http://"+proxy))
		})
	}
	for _, spliced := range []bool{false, true} {
		name := map[bool]string{false: "bare-relay", true: "bare-splice"}[spliced]
		b.Run(name, func(b *testing.B) { benchCurl(b, size, hostCurl("-p", "-x", "http://"+bareRelay(b, spliced))) })
	}
	w := openWS(b, newManagerWith(b, Config{Sandbox: "bwrap", Network: gw}), "bench")
	// The namespace's loopback is its own: -x sends 127.0.0.1 through the
	// proxy, to the host's; -p makes it a CONNECT tunnel.
	sandboxCurl := func(args string) func() (string, error) {
		cmd := "curl --noproxy '' -x $HTTP_PROXY " + args
		return func() (string, error) {
			res, err := w.Bash(context.Background(), cmd, BashOptions{})
			return strings.TrimSpace(strings.TrimSuffix(res.Output, "[exit code 0]")), err
		}
	}
	b.Run("sandbox-tunnel", func(b *testing.B) { benchCurl(b, size, sandboxCurl("-p "+strings.Join(speed, " "))) })
	b.Run("sandbox-forward", func(b *testing.B) { benchCurl(b, size, sandboxCurl(strings.Join(speed, " "))) })
	// The same at a paced 500 MB/s, a fast link's speed: the proxy's CPU
	// is then not what limits a download.
	b.Run("paced-direct", func(b *testing.B) {
		benchCurl(b, size, func() (string, error) {
			out, err := exec.Command(curl, paced...).Output()
			return string(out), err
		})
	})
	b.Run("paced-sandbox-tunnel", func(b *testing.B) { benchCurl(b, size, sandboxCurl("-p "+strings.Join(paced, " "))) })
}

// hostForwarder listens on loopback and hands each connection to a new
// command route of gw's, as the in-sandbox forwarder does.
func hostForwarder(b *testing.B, gw *egress.Gateway, hand func(*net.TCPConn, *net.UnixConn)) string {
	dir, done, err := gw.Route("bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close(); done() })
	sock := &net.UnixAddr{Name: filepath.Join(dir, egress.SocketName), Net: "unix"}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.DialUnix("unix", nil, sock)
				if err != nil {
					return
				}
				defer up.Close()
				hand(c.(*net.TCPConn), up)
			}()
		}
	}()
	return ln.Addr().String()
}

// copyBoth pipes c and up both ways, as the first forwarder did.
func copyBoth(c *net.TCPConn, up *net.UnixConn) {
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.CloseWrite()
	<-done
}

// benchCurl runs download b.N times and reports curl's mean MB/s and the
// CPU time of each download.
func benchCurl(b *testing.B, size int64, download func() (string, error)) {
	var total float64
	runs := 0
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := download()
		got, speed, ok := strings.Cut(strings.TrimSpace(out), ":")
		bps, perr := strconv.ParseFloat(speed, 64)
		if err != nil || !ok || got != strconv.FormatInt(size, 10) || perr != nil {
			b.Fatalf("curl: %v %q", err, out)
		}
		total += bps
		runs++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(runs), "cpu-ms/op")
	b.ReportMetric(total/float64(runs)/1e6, "curl-MB/s")
}

// cpuTime is this process's CPU time and its waited-for children's.
func cpuTime() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			t += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return t
}

// zeroServer serves size zero bytes on loopback, without allocating; a
// rate > 0 paces it to that many bytes a second (a link, not the CPU, the
// limit).
func zeroServer(b *testing.B, size, rate int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		if rate <= 0 {
			io.CopyN(w, zeroReader{}, size)
			return
		}
		const chunk = 1 << 20
		start := time.Now()
		for sent := int64(0); sent < size; sent += chunk {
			if _, err := io.CopyN(w, zeroReader{}, min(chunk, size-sent)); err != nil {
				return
			}
			time.Sleep(time.Until(start.Add(time.Duration(sent+chunk) * time.Second / time.Duration(rate))))
		}
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Package pgtest runs a throwaway PostgreSQL server for tests and
// benchmarks: a real server from the machine's PostgreSQL installation
// (Debian's postgresql package), initialised in a temporary directory and
// listening on loopback only. initdb refuses to run as root, so when the
// tests run as root the server runs as the unprivileged user nobody.
//
// A test binary shares one server (see Main and New); every test gets a
// database of its own on it, so tests never see each other's rows.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotInstalled means no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed (apt-get install -y postgresql; .ci/run installs it and runs every test)")

// readyTimeout bounds initdb plus the server's start.
const readyTimeout = 60 * time.Second

// unprivileged is who runs the server when the caller is root.
const unprivileged = "nobody"

// Options tune a server.
type Options struct {
	// Durable keeps PostgreSQL's default fsync and synchronous_commit, for
	// benchmarks that compare commit costs. Tests leave it false: the data
	// is thrown away, so syncing it only makes them slow.
	Durable bool
}

// Server is one running PostgreSQL server.
type Server struct {
	dir   string // owns data/, the socket and the log
	port  int
	cmd   *exec.Cmd
	exit  chan error // the postgres process's Wait result
	bin   string
	owner account
	opts  Options

	mu   sync.Mutex
	dbs  int
	stop sync.Once
}

// Start initialises a new cluster in a temporary directory and starts its
// server. Call Stop to shut it down and remove the directory.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "h9-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, exit: make(chan error, 1), bin: bin, owner: owner, opts: opts}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	if err := owner.own(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := s.initdb(ctx, bin, owner); err != nil {
		return nil, err
	}
	if err := s.start(bin, owner, opts); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx, bin); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// initdb creates the cluster: trust authentication on loopback (the
// server listens on nothing else), superuser "postgres", UTF-8.
func (s *Server) initdb(ctx context.Context, bin string, owner account) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", s.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	owner.apply(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v: %s", err, lastLines(string(out), 5))
	}
	return nil
}

// start runs postgres in the foreground of its own process, killed with
// the test process if that dies first.
func (s *Server) start(bin string, owner account, opts Options) error {
	if s.port == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
	}
	args := []string{"-D", s.dataDir(), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "shared_buffers=32MB"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	owner.apply(s.cmd)
	// SIGQUIT is PostgreSQL's immediate shutdown: nothing to keep.
	s.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	go func() { s.exit <- s.cmd.Wait() }()
	return nil
}

// waitReady polls pg_isready until the server accepts connections.
func (s *Server) waitReady(ctx context.Context, bin string) error {
	for {
		check := exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"),
			"-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "postgres", "-q")
		if check.Run() == nil {
			return nil
		}
		select {
		case err := <-s.exit:
			s.exit <- err
			return fmt.Errorf("pgtest: postgres exited (%v): %s", err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w: %s", ctx.Err(), s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN is a connection URL for database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Port is the server's loopback TCP port.
func (s *Server) Port() int { return s.port }

// Stop shuts the server down at once and removes its directory.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-s.exit:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exit
			}
		}
		os.RemoveAll(s.dir)
	})
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

func (s *Server) logTail() string {
	data, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return lastLines(string(data), 5)
}

// binDir finds the newest installed PostgreSQL's server binaries:
// $H9_PG_BIN, else pg_config --bindir, else /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if dir := os.Getenv("H9_PG_BIN"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err != nil {
			return "", fmt.Errorf("%w: H9_PG_BIN=%s has no initdb", ErrNotInstalled, dir)
		}
		return dir, nil
	}
	candidates, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(candidates, func(i, j int) bool { return version(candidates[i]) > version(candidates[j]) })
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append([]string{strings.TrimSpace(string(out))}, candidates...)
	}
	for _, dir := range candidates {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", ErrNotInstalled
}

// version reads the major version out of /usr/lib/postgresql/<v>/bin.
func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

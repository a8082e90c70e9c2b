package pgtest

import (
	"context"
	"errors"
	"fmt"
	"github.com/h9-app/h9/workspace/testenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults: what the fleet's chaos and outage tests do to a server of their
// own (Own): restart it, kill its postmaster, pause it. A shared server
// (New) is never touched.

// Own starts a server for t alone, stopped when t ends; skipped or failed
// without PostgreSQL as New is. It is durable (Options.Durable): a server
// whose postmaster is killed must keep every commit it acknowledged, as a
// production one does (without synchronous_commit the last ones are lost).
func Own(t testing.TB) *Server {
	t.Helper()
	testenv.Need(t, "postgres") // the full run's: skipped under -short
	s, err := Start(context.Background(), Options{Durable: true})
	switch {
	case errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "":
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Restart stops the server with a fast shutdown (every backend is told
// 57P01 admin_shutdown and its connection closed) and starts it again on
// the same port, as an operator's restart does.
func (s *Server) Restart(ctx context.Context) error {
	return s.stopAndStart(ctx, syscall.SIGINT)
}

// Crash kills the postmaster with SIGKILL, waits for its backends to go,
// and starts it again: crash recovery, every connection dropped.
func (s *Server) Crash(ctx context.Context) error {
	return s.stopAndStart(ctx, syscall.SIGKILL)
}

func (s *Server) stopAndStart(ctx context.Context, sig syscall.Signal) error {
	kids := s.children()
	if err := s.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("pgtest: signalling postgres: %w", err)
	}
	<-s.exit
	for _, pid := range kids { // orphaned backends notice the postmaster's death; wait for them
		for syscall.Kill(pid, 0) == nil && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Remove(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err := s.start(s.bin, s.owner, s.opts); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return s.waitReady(ctx, s.bin)
}

// Pause stops every process of the server (SIGSTOP): connections stay
// open and silent, as in a network partition. Resume undoes it.
func (s *Server) Pause() { s.signalAll(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signalAll(syscall.SIGCONT) }

func (s *Server) signalAll(sig syscall.Signal) {
	_ = s.cmd.Process.Signal(sig)
	for _, pid := range s.children() {
		_ = syscall.Kill(pid, sig)
	}
}

// children lists the postmaster's child processes (its backends and
// auxiliary processes), from /proc.
func (s *Server) children() []int {
	parent := strconv.Itoa(s.cmd.Process.Pid)
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ")".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == parent {
			out = append(out, pid)
		}
	}
	return out
}

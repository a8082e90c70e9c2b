package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// locks serialises work on one repository directory: in this process
// through a channel per path (so waiters honour their context), and across
// processes sharing H9_DATA_DIR through flock(2) on a file next to it.
type locks struct {
	mu    sync.Mutex
	paths map[string]chan struct{}
}

func newLocks() *locks { return &locks{paths: map[string]chan struct{}{}} }

func (l *locks) slot(path string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.paths[path]
	if c == nil {
		c = make(chan struct{}, 1)
		l.paths[path] = c
	}
	return c
}

// flockPoll is how often a waiter tries the file lock again.
const flockPoll = 20 * time.Millisecond

// lock takes the lock of path (the lock file's name) and returns its
// release; it gives up when ctx ends.
func (l *locks) lock(ctx context.Context, path string) (release func(), err error) {
	slot := l.slot(path)
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s: %w", path, context.Cause(ctx))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		<-slot
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			<-slot
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-time.After(flockPoll):
		case <-ctx.Done():
			f.Close()
			<-slot
			return nil, fmt.Errorf("waiting for %s: %w", path, context.Cause(ctx))
		}
	}
	return func() {
		f.Close() // closing the only descriptor releases the flock
		<-slot
	}, nil
}

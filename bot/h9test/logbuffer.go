package h9test

import (
	"bytes"
	"sync"
)

// LogBuffer collects what several goroutines (a bot's logger, a
// subprocess's stderr) write, for the test to read while they run.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

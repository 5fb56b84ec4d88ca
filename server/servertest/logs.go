package servertest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Logs is a log sink that the server's goroutines and the test can share:
// give Logger() to the code under test, read String() in assertions.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger is a text logger, every level included, writing to l.
func (l *Logs) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

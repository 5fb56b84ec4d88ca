package store

import "sync"

// broadcaster wakes long-polls when a write commits. Waiters take the
// current channel before querying; notify closes it and installs a new one,
// so a commit between query and wait is never missed.
type broadcaster struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcaster) init() { b.ch = make(chan struct{}) }

func (b *broadcaster) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcaster) notify() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// Changed returns a channel closed by the next committed write. Take it
// before reading, then wait on it if the read found nothing new.
func (s *Store) Changed() <-chan struct{} { return s.bc.wait() }

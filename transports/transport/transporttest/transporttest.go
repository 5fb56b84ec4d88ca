// Package transporttest holds what the transports' wire-level fakes
// share: the answers scripted for their next calls, and the record of the
// calls they received, which a test reads whole or waits on one at a time.
package transporttest

import (
	"sync"
	"testing"
	"time"
)

// Replies are the answers a fake gives its next calls, in order; past
// them it answers as the real service would. A fake embeds it for its
// Script method; the zero value is ready.
type Replies[R any] struct {
	mu      sync.Mutex
	replies []R
}

// Script queues answers for the next calls; after them, calls succeed.
func (r *Replies[R]) Script(replies ...R) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replies = append(r.replies, replies...)
}

// Take is the next scripted answer, nil once none is left.
func (r *Replies[R]) Take() *R {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.replies) == 0 {
		return nil
	}
	rep := r.replies[0]
	r.replies = r.replies[1:]
	return &rep
}

// Calls records the calls a fake received, in order. The zero value is
// ready.
type Calls[C any] struct {
	mu   sync.Mutex
	all  []C
	next chan C
}

// wait is where calls are handed to Next: up to 100 may wait unread.
func (c *Calls[C]) wait() chan C {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		c.next = make(chan C, 100)
	}
	return c.next
}

// Add records a call and says how many there are now (a fake's ids).
func (c *Calls[C]) Add(call C) int {
	ch := c.wait()
	c.mu.Lock()
	c.all = append(c.all, call)
	n := len(c.all)
	c.mu.Unlock()
	ch <- call
	return n
}

// All returns every call so far.
func (c *Calls[C]) All() []C {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]C(nil), c.all...)
}

// Wait waits up to d for the next call.
func (c *Calls[C]) Wait(d time.Duration) (C, bool) {
	select {
	case call := <-c.wait():
		return call, true
	case <-time.After(d):
		var zero C
		return zero, false
	}
}

// Next waits for the next call; after 30s the test fails, naming what
// never came.
func (c *Calls[C]) Next(t testing.TB, what string) C {
	t.Helper()
	call, ok := c.Wait(30 * time.Second)
	if !ok {
		t.Fatalf("no %s within 30s", what)
	}
	return call
}

package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// warmAfter is how long serve waits for its first request before it
// starts what waits for one anyway.
const warmAfter = 250 * time.Millisecond

// warmGate is closed once serve has answered its first request, or
// warmAfter after it began to serve, whichever is first. A cold start's
// first answer is then the only work in the process: the collector
// (startgc), the dispatcher, the outbox, the transports' loops and the
// sandbox check all start once it is out.
type warmGate struct {
	opened chan struct{}
	once   sync.Once
	after  time.Duration
	onOpen func()
}

func newWarmGate(after time.Duration, onOpen func()) *warmGate {
	return &warmGate{opened: make(chan struct{}), after: after, onOpen: onOpen}
}

// start begins the wait for the first request.
func (g *warmGate) start() { time.AfterFunc(g.after, g.open) }

// open opens the gate, once.
func (g *warmGate) open() {
	g.once.Do(func() {
		close(g.opened)
		if g.onOpen != nil {
			g.onOpen()
		}
	})
}

// connState opens the gate when a connection has sent its first answer
// whole (http.Server.ConnState): it is idle, waiting for its next
// request, or closed.
func (g *warmGate) connState(_ net.Conn, state http.ConnState) {
	if state == http.StateIdle || state == http.StateClosed {
		g.open()
	}
}

// whenWarm waits until the server has answered its first request (or
// ctx ends). An org with no gate is warm.
func (o orgServe) whenWarm(ctx context.Context) {
	if o.warm == nil {
		return
	}
	select {
	case <-o.warm:
	case <-ctx.Done():
	}
}

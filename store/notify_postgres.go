package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/helixml/helix-org/domain"
)

// Several servers on one PostgreSQL database wake each other: every write
// transaction notifies changesChannel as it takes the write lock
// (beginWrite), which PostgreSQL delivers at commit and drops at
// rollback; each store listens on a connection of its own and wakes its
// waiters (Changed) on a commit another server made.

// changesChannel is the NOTIFY channel of committed writes; the payload
// names the store that wrote, so a store skips its own commits, which it
// has already announced.
const changesChannel = "helix_org_changes"

// listenerName is the listening connection's application_name, so an
// operator (or a test) can tell it apart in pg_stat_activity.
const listenerName = "helix-org listen"

// listenRetryMax caps the wait between attempts to reconnect.
const listenRetryMax = 5 * time.Second

// remoteWakeGap is the least time between two wake-ups for other servers'
// commits: the first wakes the waiters at once, those that follow within
// the gap once at its end. A busy cluster's servers then do not re-run
// their loops (dispatch, deliveries, schedules) once per commit of every
// other server, and a waiter still hears of one within the gap.
const remoteWakeGap = 50 * time.Millisecond

// Shared reports whether several servers may share the database
// (PostgreSQL): start-up then leaves running activations with a live lease
// to the server that runs them.
func (s *Store) Shared() bool { return s.dia.name() == "postgres" }

// listen starts waking this store's waiters on other servers' commits,
// until Close.
func (s *Store) listen(url, node string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	s.stopListening = func() { cancel(); wg.Wait() }
	wake := make(chan struct{}, 1)
	wg.Go(func() { s.wakeForOthers(ctx, wake) })
	wg.Go(func() {
		wait := 100 * time.Millisecond
		for {
			err := s.listenOnce(ctx, url, node, wake, func() { wait = 100 * time.Millisecond })
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("listening for other servers' commits failed; reconnecting", "err", err, "in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, listenRetryMax)
		}
	})
}

// wakeForOthers wakes the waiters when wake is signalled, at most once
// every remoteWakeGap, until ctx ends.
func (s *Store) wakeForOthers(ctx context.Context, wake <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		s.bc.notify()
		select {
		case <-ctx.Done():
			return
		case <-time.After(remoteWakeGap):
		}
	}
}

// listenOnce connects, listens and signals wake on each commit of another
// server until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, url, node string, wake chan<- struct{}, connected func()) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	cfg.RuntimeParams["application_name"] = listenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	connected()
	// Whatever other servers committed while nobody listened is caught
	// up on by the waiters' next read.
	s.bc.notify()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for a notification: %w", err)
		}
		if n.Payload != node {
			select {
			case wake <- struct{}{}:
			default: // a wake-up is already due
			}
		}
	}
}

// newNode names one open store among those sharing a database.
func newNode() string { return domain.RandomSlug(12) }

package store

import (
	"context"
	"fmt"
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

// Shared reports whether several servers may share the database
// (PostgreSQL): start-up then leaves running activations with a live lease
// to the server that runs them.
func (s *Store) Shared() bool { return s.dia.name() == "postgres" }

// listen starts waking this store's waiters on other servers' commits,
// until Close.
func (s *Store) listen(url, node string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stopListening = func() { cancel(); <-done }
	go func() {
		defer close(done)
		wait := 100 * time.Millisecond
		for {
			err := s.listenOnce(ctx, url, node, func() { wait = 100 * time.Millisecond })
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
	}()
}

// listenOnce connects, listens and wakes the waiters on each commit of
// another server until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, url, node string, connected func()) error {
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
			s.bc.notify()
		}
	}
}

// newNode names one open store among those sharing a database.
func newNode() string { return domain.RandomSlug(12) }

package store

import (
	"context"
	"sync"
)

// settingsWatch wakes those waiting for a setting to change: the
// transports' connection loops and the Helix watcher, idle until a token
// is set. They used to wake at every commit and read their settings
// each, a few queries per write; one watcher now reads the settings epoch
// once per commit and wakes them only when it moved, which happens in the
// transaction of any process's change (epochs.go).
type settingsWatch struct {
	once sync.Once
	bc   broadcaster
	// stop ends the watcher when the store closes.
	stop      chan struct{}
	closeOnce sync.Once
}

// SettingsChanged returns a channel closed once a committed write has
// changed the settings, this process's or, noticed at its next commit,
// another's. Take it before reading the settings, then wait on it.
func (s *Store) SettingsChanged() <-chan struct{} {
	s.setWatch.once.Do(s.startSettingsWatch)
	return s.setWatch.bc.wait()
}

// startSettingsWatch reads the epoch the first waiter's read will see at
// least, before any waiter holds a channel, so no change after it is
// missed.
func (s *Store) startSettingsWatch() {
	s.setWatch.bc.init()
	s.setWatch.stop = make(chan struct{})
	changed := s.bc.wait()
	last, err := s.epoch(context.Background(), epochSettings)
	if err != nil {
		last = -1 // the first epoch read wakes the waiters, to read again
	}
	go s.watchSettings(changed, last)
}

func (s *Store) watchSettings(changed <-chan struct{}, last int64) {
	for {
		select {
		case <-changed:
		case <-s.setWatch.stop:
			return
		}
		changed = s.bc.wait()
		n, err := s.epoch(context.Background(), epochSettings)
		if err != nil {
			// Unreadable (closing, or the database away): wake the
			// waiters, whose own read reports it.
			n = -1
		}
		if n != last || n < 0 {
			last = n
			s.setWatch.bc.notify()
		}
	}
}

// closeSettingsWatch ends the watcher, if it started.
func (s *Store) closeSettingsWatch() {
	s.setWatch.once.Do(func() {}) // a watch never started stays so
	if s.setWatch.stop != nil {
		s.setWatch.closeOnce.Do(func() { close(s.setWatch.stop) })
	}
}

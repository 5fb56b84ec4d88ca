package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// eventPages keeps the pages ReadEvents read on SQLite, by query, so that
// the same read again — a worker asking before anything new came, many
// reading the same page — costs no page query nor decoding (most of a
// short read_events call). It needs no invalidation: events are only ever
// appended, never changed or deleted, and SQLite commits one writer at a
// time, so an event committed later, by any process, has a higher seq
// than every committed one. A page as long as its limit therefore never
// changes; a shorter one holds while the highest seq of all events (one
// point lookup, lastSeqSQL) is the one read with it. PostgreSQL's
// sequences can commit out of order, so it reads every page.
type eventPages struct {
	mu sync.Mutex
	m  map[string]eventPage
}

type eventPage struct {
	events []domain.Event
	// last is the highest seq of all events when the page was read.
	last int64
	full bool
}

// Pages larger than maxPageBytes (as the database wrote them) are not
// kept, and past maxPages kept it starts empty again: a few MB at most.
const (
	maxPageBytes = 32 << 10
	maxPages     = 128
)

// lastSeqSQL is the highest seq of all events: the last entry of the
// primary key.
const lastSeqSQL = "SELECT COALESCE(MAX(seq), 0) FROM events"

func pageKey(q EventQuery) string {
	return strings.Join(q.StreamIDs, "\x00") + "\x01" + strconv.FormatInt(q.Since, 10) + "\x01" + strconv.Itoa(q.Limit)
}

// cachedPage returns q's page if one kept is still the page.
func (s *Store) cachedPage(ctx context.Context, key string) ([]domain.Event, bool, error) {
	s.pages.mu.Lock()
	p, ok := s.pages.m[key]
	s.pages.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	if !p.full {
		last, err := s.lastSeq(ctx)
		if err != nil || last != p.last {
			return nil, false, err
		}
	}
	// Callers may append to or reorder what they get.
	return slices.Clone(p.events), true, nil
}

func (s *Store) keepPage(key string, p eventPage, size int) {
	if size > maxPageBytes {
		return
	}
	s.pages.mu.Lock()
	defer s.pages.mu.Unlock()
	if s.pages.m == nil || len(s.pages.m) >= maxPages {
		s.pages.m = make(map[string]eventPage)
	}
	s.pages.m[key] = p
}

func (s *Store) lastSeq(ctx context.Context) (int64, error) {
	ctx = context.WithoutCancel(ctx) // uncancellable: see queryFixed
	st, err := s.prepared(ctx, lastSeqSQL)
	if err != nil {
		return 0, fmt.Errorf("read events: %w", unavailable(err))
	}
	var n int64
	if err := st.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("read events: %w", unavailable(err))
	}
	return n, nil
}

package store

import (
	"context"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
)

// Bearer is what a request on a worker's endpoint is authenticated with:
// its token's bearer, and what that worker may call now. Tools and Skills
// are shared between requests: read them, never change them.
type Bearer struct {
	Token  TokenInfo
	Worker domain.Worker
	// Tools are the worker's live grants, by name.
	Tools []string
	// Held are those of Tools whose calls wait for a person's approval
	// (ApprovalRequired).
	Held []string
	// Skills are every skill of the org.
	Skills []domain.Skill
	// Outside are the tools of every outside MCP server.
	Outside []domain.OutsideTool
	// Epochs are the caches' epochs as this authentication read them.
	Epochs Epochs
}

// Authenticate returns the bearer of tok, as VerifyToken, GetWorker,
// LiveTools and ListSkills would, from what an earlier request read when
// nothing it read has changed since: one read of the auth epoch instead
// of four queries. A token that lapses, or a grant, ends what was kept at
// that moment; a revocation, dismissal, grant or skill change — made by
// any process on the database — moves the epoch (epochs.go), so the very
// next request reads anew.
func (s *Store) Authenticate(ctx context.Context, tok string) (Bearer, error) {
	// Every epoch in the one read, for the request's other cached reads
	// (Bearer.Epochs).
	epochs, err := s.readEpochs(ctx)
	if err != nil {
		return Bearer{}, err
	}
	epoch := epochs.auth
	hash := hashToken(tok)
	if b, row, touch, ok := s.auth.get(hash, epoch, s.Now()); ok {
		if touch {
			s.touchToken(row)
		}
		b.Epochs = epochs
		return b, nil
	}
	row, err := s.liveToken(ctx, tok)
	if err != nil {
		s.auth.drop(hash)
		return Bearer{}, err
	}
	b := Bearer{Token: row.info(), Epochs: epochs}
	if b.Worker, err = s.GetWorker(ctx, row.WorkerID); err != nil {
		return Bearer{}, err
	}
	g, err := s.liveGrants(ctx, row.WorkerID)
	if err != nil {
		return Bearer{}, err
	}
	b.Tools, b.Held = g.tools, g.held
	lapse := g.lapse
	if b.Skills, err = s.ListSkills(ctx); err != nil {
		return Bearer{}, err
	}
	if b.Outside, err = s.OutsideTools(ctx); err != nil {
		return Bearer{}, err
	}
	if row.ExpiresAt != nil && (lapse.IsZero() || row.ExpiresAt.Before(lapse)) {
		lapse = *row.ExpiresAt
	}
	if s.auth.put(hash, &authEntry{epoch: epoch, lapse: lapse, bearer: b, row: row}, s.Now()) {
		s.touchToken(row)
	}
	return b, nil
}

// maxAuthEntries bounds the cache: past it, it starts empty again. Each
// run has a token of its own, so tokens come and go.
const maxAuthEntries = 4096

// authCache keeps Authenticate's answers by token hash.
type authCache struct {
	mu      sync.Mutex
	entries map[string]*authEntry
}

type authEntry struct {
	epoch  int64
	lapse  time.Time // when a grant or the token lapses; zero: never
	bearer Bearer
	row    tokenRow // LastUsedAt as last recorded, for touchToken
}

// get returns a kept answer still good at epoch and now, and whether the
// token's use is due to be recorded (it is then marked recorded, so
// requests at once do not all write it).
func (c *authCache) get(hash string, epoch int64, now time.Time) (b Bearer, row tokenRow, touch, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[hash]
	if e == nil || e.epoch != epoch || (!e.lapse.IsZero() && !now.Before(e.lapse)) {
		return Bearer{}, tokenRow{}, false, false
	}
	row, touch = e.claimUse(now)
	return e.bearer, row, touch, true
}

// put keeps e and reports whether the token's use is due to be recorded.
func (c *authCache) put(hash string, e *authEntry, now time.Time) (touch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxAuthEntries {
		c.entries = make(map[string]*authEntry)
	}
	c.entries[hash] = e
	_, touch = e.claimUse(now)
	return touch
}

// claimUse reports whether the token's use is due to be recorded (its
// last is older than lastUsedEvery) and returns its row as it was for
// touchToken; the entry then counts it recorded. Callers hold the lock.
func (e *authEntry) claimUse(now time.Time) (tokenRow, bool) {
	row := e.row
	if row.LastUsedAt != nil && now.Sub(*row.LastUsedAt) < lastUsedEvery {
		return row, false
	}
	e.row.LastUsedAt = &now
	return row, true
}

func (c *authCache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}

package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// TokenIDLen is how many hex digits of a token's hash make its public id:
// enough to tell a worker's tokens apart, nothing an attacker can use.
const TokenIDLen = 8

// lastUsedEvery bounds how often a token's last use is written: a busy
// client costs one small write a minute, not one per call.
const lastUsedEvery = time.Minute

// Token is a token as an operator sees it: never the secret, only a short
// public id taken from its hash.
type Token struct {
	ID           string     `json:"id"`
	WorkerID     string     `json:"worker"`
	Kind         string     `json:"kind"`
	Label        string     `json:"label,omitempty"`
	ActivationID string     `json:"activation,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	LastUsedAt   *time.Time `json:"lastUsedAt,omitempty"`
	RevokedAt    *time.Time `json:"revokedAt,omitempty"`
}

func (r tokenRow) toToken() Token {
	return Token{ID: r.Hash[:TokenIDLen], WorkerID: r.WorkerID, Kind: r.Kind, Label: r.Label, ActivationID: r.ActivationID,
		CreatedAt: r.CreatedAt.UTC(), ExpiresAt: utcPtr(r.ExpiresAt), LastUsedAt: utcPtr(r.LastUsedAt), RevokedAt: utcPtr(r.RevokedAt)}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// TokenQuery selects tokens to list.
type TokenQuery struct {
	Worker string
	// All includes revoked and expired tokens; by default only live ones.
	All bool
}

// ListTokens lists tokens, oldest first.
func (s *Store) ListTokens(ctx context.Context, q TokenQuery) ([]Token, error) {
	// Uses this process has recorded but not yet written are seen.
	s.flushTouches()
	db := s.read(ctx).Order("created_at, hash")
	if q.Worker != "" {
		db = db.Where("worker_id = ?", q.Worker)
	}
	if !q.All {
		db = db.Where("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", s.Now())
	}
	var rows []tokenRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]Token, len(rows))
	for i, r := range rows {
		out[i] = r.toToken()
	}
	return out, nil
}

// TokenSelection names the live tokens to revoke: one by its public id,
// or every one of a worker.
type TokenSelection struct {
	ID     string
	Worker string
}

// RevokeTokens ends the live tokens sel names and returns them. An id
// that names no live token, or more than one, is an error; so is a
// worker with no live token.
func (s *Store) RevokeTokens(ctx context.Context, sel TokenSelection) ([]Token, error) {
	var out []Token
	err := s.write(ctx, func(tx *gorm.DB) error {
		out = nil
		q := tx.Where("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", s.Now())
		if sel.ID != "" {
			q = q.Where("substr(hash, 1, ?) = ?", TokenIDLen, sel.ID)
		}
		if sel.Worker != "" {
			q = q.Where("worker_id = ?", sel.Worker)
		}
		var rows []tokenRow
		if err := q.Order("created_at, hash").Find(&rows).Error; err != nil {
			return err
		}
		switch {
		case len(rows) == 0 && sel.ID != "":
			return fmt.Errorf("no live token with id %q (see helix-org token list): %w", sel.ID, domain.ErrNotFound)
		case len(rows) == 0:
			return fmt.Errorf("worker %s has no live tokens: %w", sel.Worker, domain.ErrNotFound)
		case len(rows) > 1 && sel.ID != "":
			return fmt.Errorf("id %q names %d tokens; revoke them with --worker: %w", sel.ID, len(rows), domain.ErrConflict)
		}
		now := s.Now()
		for _, r := range rows {
			if err := tx.Model(&tokenRow{}).Where("hash = ?", r.Hash).Update("revoked_at", &now).Error; err != nil {
				return err
			}
			r.RevokedAt = &now
			out = append(out, r.toToken())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("revoke tokens: %w", err)
	}
	return out, nil
}

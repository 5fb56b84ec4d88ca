package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Token prefixes mark helix-org bearer tokens so secret scanners can find
// them, and tell a long-lived operator token (minted by bootstrap, token
// create or chat) from a run-scoped activation token, which dies with its
// run and is the only kind the model relay accepts.
const (
	TokenPrefix           = "hxo_"
	ActivationTokenPrefix = "hxa_"
)

// Token kinds.
const (
	TokenOperator   = "operator"
	TokenActivation = "activation"
)

// ErrBadToken means a token is unknown, expired or revoked.
var ErrBadToken = errors.New("invalid or expired token")

type tokenRow struct {
	Hash         string     `gorm:"primaryKey"`
	WorkerID     string     `gorm:"not null;index"`
	Worker       *workerRow `gorm:"foreignKey:WorkerID"`
	Kind         string     `gorm:"not null"`
	ActivationID string     `gorm:"index"`
	// Label says what the token was minted for ("bootstrap", "chat"…),
	// so `token list` tells them apart.
	Label      string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

func (tokenRow) TableName() string { return "tokens" }

// TokenSpec says what a new token is for.
type TokenSpec struct {
	WorkerID     string
	Kind         string
	ActivationID string
	TTL          time.Duration
	// Label says what the token is for; shown by `token list`.
	Label string
}

// CreateToken mints a 256-bit bearer token. Only its hash is stored; the
// plaintext is returned once and never again.
func (s *Store) CreateToken(ctx context.Context, spec TokenSpec) (string, error) {
	prefix := TokenPrefix
	if spec.Kind == TokenActivation {
		prefix = ActivationTokenPrefix
	}
	tok, hash, err := newToken(prefix)
	if err != nil {
		return "", err
	}
	row := tokenRow{Hash: hash, WorkerID: spec.WorkerID, Kind: spec.Kind, ActivationID: spec.ActivationID, Label: spec.Label, CreatedAt: s.Now()}
	if spec.TTL > 0 {
		exp := s.Now().Add(spec.TTL)
		row.ExpiresAt = &exp
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		if ok, err := exists(tx, &workerRow{}, spec.WorkerID); err != nil || !ok {
			return orNotFound(err, "worker", spec.WorkerID)
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return "", fmt.Errorf("create token for %s: %w", spec.WorkerID, err)
	}
	return tok, nil
}

// newToken returns a fresh 256-bit token with prefix, and its hash.
func newToken(prefix string) (tok, hash string, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("token entropy: %w", err)
	}
	tok = prefix + base64.RawURLEncoding.EncodeToString(raw)
	return tok, hashToken(tok), nil
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// TokenInfo is what a live token says about its bearer.
type TokenInfo struct {
	WorkerID string
	// Kind is TokenOperator or TokenActivation.
	Kind         string
	ActivationID string
}

// VerifyToken returns who a live token belongs to. A token whose prefix
// does not match its kind is refused: a prefix is a promise to scanners.
func (s *Store) VerifyToken(ctx context.Context, tok string) (TokenInfo, error) {
	row, err := s.liveToken(ctx, tok)
	if err != nil {
		return TokenInfo{}, err
	}
	s.touchToken(row)
	return row.info(), nil
}

// liveToken is tok's row when tok is live.
func (s *Store) liveToken(ctx context.Context, tok string) (tokenRow, error) {
	prefix := TokenPrefix
	if strings.HasPrefix(tok, ActivationTokenPrefix) {
		prefix = ActivationTokenPrefix
	} else if !strings.HasPrefix(tok, TokenPrefix) {
		return tokenRow{}, ErrBadToken
	}
	var row tokenRow
	err := s.read(ctx).Where("hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", hashToken(tok), s.Now()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return tokenRow{}, ErrBadToken
	}
	if err != nil {
		return tokenRow{}, fmt.Errorf("look up token: %w", err)
	}
	if (row.Kind == TokenActivation) != (prefix == ActivationTokenPrefix) {
		return tokenRow{}, ErrBadToken
	}
	return row, nil
}

func (r tokenRow) info() TokenInfo {
	return TokenInfo{WorkerID: r.WorkerID, Kind: r.Kind, ActivationID: r.ActivationID}
}

// RevokeToken ends one token, e.g. when the chat session it was minted for exits.
func (s *Store) RevokeToken(ctx context.Context, tok string) error {
	now := s.Now()
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Model(&tokenRow{}).Where("hash = ?", hashToken(tok)).Update("revoked_at", &now).Error
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

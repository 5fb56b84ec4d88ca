package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Web sign-in secrets carry their own prefixes so secret scanners and
// logs tell them from bearer tokens.
const (
	SessionPrefix    = "hxs_"
	SignInCodePrefix = "hxc_"
	// SignInCodeTTL is how long a one-click sign-in link works: long
	// enough to click it from the terminal, short enough that a copy
	// found later is useless.
	SignInCodeTTL = 15 * time.Minute
)

var (
	// ErrNoSession means a session id is unknown, expired or ended, or
	// the token or worker it stands on is gone.
	ErrNoSession = errors.New("not signed in, or the session has ended")
	// ErrBadSignInCode means a sign-in link is unknown, used or expired.
	ErrBadSignInCode = errors.New("this sign-in link is unknown, already used or expired; run helix-org bootstrap (or token create) for a new one, or sign in with a token")
)

// sessionRow is one signed-in browser. Only the hash of its id is stored,
// and it stands on the operator token it came from: revoking or expiring
// that token, or dismissing the worker, ends it.
type sessionRow struct {
	Hash      string     `gorm:"primaryKey"`
	WorkerID  string     `gorm:"not null;index"`
	Worker    *workerRow `gorm:"foreignKey:WorkerID"`
	TokenHash string     `gorm:"not null;index"`
	// ViaLink marks a session opened from a sign-in link, which only
	// someone with the database (bootstrap, token create) can mint.
	ViaLink bool `gorm:"not null;default:false"`
	// OIDC marks a session opened by the identity provider: its token was
	// minted for it alone, and signing out revokes it.
	OIDC      bool `gorm:"column:oidc;not null;default:false"`
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (sessionRow) TableName() string { return "web_sessions" }

// signInCodeRow is a single-use code for a one-click sign-in link, bound
// to the operator token minted with it.
type signInCodeRow struct {
	Hash      string `gorm:"primaryKey"`
	TokenHash string `gorm:"not null"`
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (signInCodeRow) TableName() string { return "sign_in_codes" }

// Session is a signed-in person as the web UI sees them.
type Session struct {
	WorkerID string
	// ViaLink says the session was opened from a sign-in link rather than
	// a token alone: proof of access to the database, which operational
	// config requires (a token may sit in an agent's MCP config).
	ViaLink bool
	// OIDC says the identity provider vouched for the person (sign-in with
	// the company's provider): like a link, more than a token alone.
	OIDC      bool
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Strong says the session proves more than a bearer token, which may sit
// in an agent's MCP config: a one-time link or the identity provider.
func (s Session) Strong() bool { return s.ViaLink || s.OIDC }

// CreateSignInCode mints a single-use code for a one-click sign-in link
// that signs in as token's worker. Only the code's hash is stored.
func (s *Store) CreateSignInCode(ctx context.Context, token string, ttl time.Duration) (string, error) {
	code, hash, err := newSecret(SignInCodePrefix)
	if err != nil {
		return "", err
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		if _, err := s.signInWorker(tx, hashToken(token)); err != nil {
			return err
		}
		now := s.Now()
		return tx.Create(&signInCodeRow{Hash: hash, TokenHash: hashToken(token), CreatedAt: now, ExpiresAt: now.Add(ttl)}).Error
	})
	if err != nil {
		return "", fmt.Errorf("create sign-in code: %w", err)
	}
	return code, nil
}

// SignInWithCode spends a sign-in code on a new session lasting ttl. The
// code is deleted in the same transaction, so it works once.
func (s *Store) SignInWithCode(ctx context.Context, code string, ttl time.Duration) (string, Session, error) {
	if !strings.HasPrefix(code, SignInCodePrefix) {
		return "", Session{}, ErrBadSignInCode
	}
	return s.signIn(ctx, ttl, sessionRow{ViaLink: true}, func(tx *gorm.DB) (string, error) {
		var row signInCodeRow
		err := tx.Where("hash = ? AND expires_at > ?", hashToken(code), s.Now()).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return "", ErrBadSignInCode
		}
		if err != nil {
			return "", err
		}
		return row.TokenHash, tx.Delete(&row).Error
	})
}

// SignInWithToken starts a session lasting ttl for the worker an operator
// token belongs to. Only people sign in: not AI workers, and not with the
// token of an agent run.
func (s *Store) SignInWithToken(ctx context.Context, token string, ttl time.Duration) (string, Session, error) {
	return s.signIn(ctx, ttl, sessionRow{}, func(*gorm.DB) (string, error) { return hashToken(token), nil })
}

// SignInWithEmail starts a session lasting ttl for the person an email
// the identity provider verified belongs to (emailWorker: a contact, or
// an invitation, which this accepts). The session stands on an operator
// token minted for it alone and never shown, so revoking tokens and
// dismissing the worker end it as they end any other.
func (s *Store) SignInWithEmail(ctx context.Context, email string, ttl time.Duration) (string, Session, error) {
	email, err := NormalEmail("email", email)
	if err != nil {
		return "", Session{}, err
	}
	return s.signIn(ctx, ttl, sessionRow{OIDC: true}, func(tx *gorm.DB) (string, error) {
		worker, err := s.emailWorker(tx, email)
		if err != nil {
			return "", err
		}
		_, hash, err := newToken(TokenPrefix)
		if err != nil {
			return "", err
		}
		exp := s.Now().Add(ttl)
		return hash, tx.Create(&tokenRow{Hash: hash, WorkerID: worker, Kind: TokenOperator, Label: "oidc sign-in", CreatedAt: s.Now(), ExpiresAt: &exp}).Error
	})
}

// signIn opens a session on the token whose hash tokenOf names (spending a
// code first, say), in one transaction, and sweeps away expired sessions
// and codes while it holds the write lock.
func (s *Store) signIn(ctx context.Context, ttl time.Duration, how sessionRow, tokenOf func(tx *gorm.DB) (string, error)) (string, Session, error) {
	id, hash, err := newSecret(SessionPrefix)
	if err != nil {
		return "", Session{}, err
	}
	var row sessionRow
	err = s.write(ctx, func(tx *gorm.DB) error {
		tokenHash, err := tokenOf(tx)
		if err != nil {
			return err
		}
		worker, err := s.signInWorker(tx, tokenHash)
		if err != nil {
			return err
		}
		now := s.Now()
		// An OIDC session's token was minted for it alone and never shown:
		// it goes with the session.
		expired := tx.Model(&sessionRow{}).Select("token_hash").Where("oidc = ? AND expires_at <= ?", true, now)
		if err := tx.Where("hash IN (?)", expired).Delete(&tokenRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("expires_at <= ?", now).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("expires_at <= ?", now).Delete(&signInCodeRow{}).Error; err != nil {
			return err
		}
		row = sessionRow{Hash: hash, WorkerID: worker, TokenHash: tokenHash, ViaLink: how.ViaLink, OIDC: how.OIDC, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		return tx.Create(&row).Error
	})
	if err != nil {
		return "", Session{}, fmt.Errorf("sign in: %w", err)
	}
	return id, row.toSession(), nil
}

// signInWorker returns the worker a token may sign in as: a live operator
// token of an active human worker.
func (s *Store) signInWorker(tx *gorm.DB, tokenHash string) (string, error) {
	var tok tokenRow
	err := tx.Where("hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", tokenHash, s.Now()).Take(&tok).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", ErrBadToken
	}
	if err != nil {
		return "", err
	}
	if tok.Kind == TokenOAuth {
		return "", fmt.Errorf("this token was issued to an MCP client; sign in with an operator token (helix-org token create): %w", domain.ErrForbidden)
	}
	if tok.Kind != TokenOperator {
		return "", fmt.Errorf("this is the token of an agent run; sign in with an operator token (helix-org token create): %w", domain.ErrForbidden)
	}
	var w workerRow
	if err := tx.Where("id = ?", tok.WorkerID).Take(&w).Error; err != nil {
		return "", notFoundOr(err, "worker", tok.WorkerID)
	}
	switch {
	case w.DismissedAt != nil:
		return "", fmt.Errorf("worker %s has been dismissed: %w", w.ID, domain.ErrForbidden)
	case w.Kind != string(domain.WorkerHuman):
		return "", fmt.Errorf("%s is an AI worker; only people sign in to the web UI: %w", w.ID, domain.ErrForbidden)
	}
	return w.ID, nil
}

// VerifySession returns the live session an id names. A session ends at
// its expiry, at sign-out, when its token is revoked or expires, and when
// its worker is dismissed.
func (s *Store) VerifySession(ctx context.Context, id string) (Session, error) {
	if !strings.HasPrefix(id, SessionPrefix) {
		return Session{}, ErrNoSession
	}
	now := s.Now()
	var row sessionRow
	err := s.read(ctx).Model(&sessionRow{}).
		Joins("JOIN tokens ON tokens.hash = web_sessions.token_hash").
		Joins("JOIN workers ON workers.id = web_sessions.worker_id").
		Where("web_sessions.hash = ? AND web_sessions.expires_at > ?", hashToken(id), now).
		Where("tokens.revoked_at IS NULL AND (tokens.expires_at IS NULL OR tokens.expires_at > ?)", now).
		Where("workers.dismissed_at IS NULL").
		Select("web_sessions.*").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("look up session: %w", err)
	}
	return row.toSession(), nil
}

// EndSession signs a session out, deleting the token an OIDC session
// stood on (minted for it alone). Ending one that is already gone is fine.
func (s *Store) EndSession(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		var row sessionRow
		err := tx.Where("hash = ?", hashToken(id)).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.OIDC {
			if err := tx.Where("hash = ?", row.TokenHash).Delete(&tokenRow{}).Error; err != nil {
				return err
			}
		}
		return tx.Delete(&row).Error
	})
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

func (r sessionRow) toSession() Session {
	return Session{WorkerID: r.WorkerID, ViaLink: r.ViaLink, OIDC: r.OIDC, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}
}

// newSecret returns a fresh 256-bit secret with prefix, and its hash.
func newSecret(prefix string) (secret, hash string, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("secret entropy: %w", err)
	}
	secret = prefix + base64.RawURLEncoding.EncodeToString(raw)
	return secret, hashToken(secret), nil
}

// RevokeUnusedTokens revokes worker's live operator tokens labelled label
// that no live web session stands on, and returns how many. bootstrap
// mints one for each sign-in link it prints; without this, the links
// never followed leave a live token each for a session's length.
func (s *Store) RevokeUnusedTokens(ctx context.Context, worker, label string) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		now := s.Now()
		inUse := tx.Model(&sessionRow{}).Select("token_hash").Where("expires_at > ?", now)
		res := tx.Model(&tokenRow{}).
			Where("worker_id = ? AND kind = ? AND label = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", worker, TokenOperator, label, now).
			Where("hash NOT IN (?)", inUse).
			Update("revoked_at", &now)
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("revoke unused %q tokens of %s: %w", label, worker, err)
	}
	return n, nil
}

package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// MCP clients that log in (the MCP authorization spec): a client
// registers itself, a person consents in the web UI, and the client
// trades the code it gets for an access token of that person's worker.
// The access token is an ordinary row of the tokens table (kind oauth),
// so it authenticates, lists and revokes like any other; the refresh
// token that renews it lives here, hashed, and rotates at each use.
const (
	TokenOAuth = "oauth"

	OAuthClientPrefix  = "hxk_"
	OAuthCodePrefix    = "hxz_"
	OAuthRefreshPrefix = "hxr_"

	// OAuthCodeTTL is how long a code waits for its exchange: the client
	// is on the same machine as the browser, seconds away.
	OAuthCodeTTL = 5 * time.Minute
	// OAuthAccessTTL is an access token's life: short, since the client
	// renews it without the person.
	OAuthAccessTTL = time.Hour
	// OAuthRefreshTTL bounds a refresh token, and so a client left alone.
	OAuthRefreshTTL = 30 * 24 * time.Hour
	// maxWaitingClients bounds registrations nobody has consented to yet:
	// registration is open to anyone, as the spec has it.
	maxWaitingClients = 1000
	// waitingClientTTL is how long a registration may wait for a consent
	// before it is swept.
	waitingClientTTL = 24 * time.Hour
)

var (
	// ErrOAuthGrant is a code or refresh token that is unknown, expired,
	// used, another client's, or does not match its request (OAuth's
	// invalid_grant).
	ErrOAuthGrant = errors.New("invalid grant")
	// ErrOAuthTarget is a resource the grant was not given for
	// (invalid_target, RFC 8707).
	ErrOAuthTarget = errors.New("invalid target")
	// ErrOAuthClient is a client id nobody registered (invalid_client).
	ErrOAuthClient = errors.New("unknown client")
	// ErrTooManyClients refuses a registration while too many wait for
	// a consent.
	ErrTooManyClients = errors.New("too many client registrations waiting for a consent; try again later")
)

type oauthClientRow struct {
	ID   string `gorm:"primaryKey"`
	Name string `gorm:"not null"`
	// RedirectURIs are newline-separated: a valid URI holds no newline.
	RedirectURIs string `gorm:"not null"`
	CreatedAt    time.Time
	// ConsentedAt is the first consent given to it; until then the
	// registration may be swept.
	ConsentedAt *time.Time `gorm:"index"`
}

func (oauthClientRow) TableName() string { return "oauth_clients" }

type oauthCodeRow struct {
	Hash        string `gorm:"primaryKey"`
	ClientID    string `gorm:"not null"`
	WorkerID    string `gorm:"not null"`
	RedirectURI string `gorm:"not null"`
	Challenge   string `gorm:"not null"`
	Resource    string `gorm:"not null"`
	CreatedAt   time.Time
	ExpiresAt   time.Time `gorm:"not null;index"`
	// UsedAt and GrantID are set by the exchange: a second exchange of
	// the code revokes that grant (OAuth 2.1 §4.1.3).
	UsedAt  *time.Time
	GrantID string
}

func (oauthCodeRow) TableName() string { return "oauth_codes" }

// oauthRefreshRow is one refresh token. Rotation adds a row to the same
// grant; presenting a rotated one again revokes the grant.
type oauthRefreshRow struct {
	Hash     string `gorm:"primaryKey"`
	GrantID  string `gorm:"not null;index"`
	ClientID string `gorm:"not null"`
	WorkerID string `gorm:"not null;index"`
	Resource string `gorm:"not null"`
	// TokenHash is the access token minted with it: revoking that token
	// (token revoke) ends the grant too.
	TokenHash string `gorm:"not null"`
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
	UsedAt    *time.Time
	RevokedAt *time.Time
}

func (oauthRefreshRow) TableName() string { return "oauth_refresh_tokens" }

// OAuthClient is a registered MCP client.
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
}

func (r oauthClientRow) toClient() OAuthClient {
	return OAuthClient{ID: r.ID, Name: r.Name, RedirectURIs: strings.Split(r.RedirectURIs, "\n"), CreatedAt: r.CreatedAt.UTC()}
}

// AllowsRedirect reports whether uri is one of the client's registered
// redirect URIs, compared exactly (OAuth 2.1 §2.3.1) but for a loopback
// URI's port, which a native client picks when it runs (RFC 8252 §7.3).
func (c OAuthClient) AllowsRedirect(uri string) bool {
	if slices.Contains(c.RedirectURIs, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
		return false
	}
	for _, reg := range c.RedirectURIs {
		r, err := url.Parse(reg)
		if err == nil && r.Scheme == "http" && r.Hostname() == u.Hostname() && r.EscapedPath() == u.EscapedPath() && r.RawQuery == u.RawQuery && u.Fragment == "" && u.User == nil {
			return true
		}
	}
	return false
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RegisterOAuthClient records a client (RFC 7591) whose metadata the
// caller has checked, and sweeps registrations that never got a consent.
func (s *Store) RegisterOAuthClient(ctx context.Context, name string, redirectURIs []string) (OAuthClient, error) {
	id, _, err := newSecret(OAuthClientPrefix)
	if err != nil {
		return OAuthClient{}, err
	}
	row := oauthClientRow{ID: id, Name: name, RedirectURIs: strings.Join(redirectURIs, "\n"), CreatedAt: s.Now()}
	err = s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("consented_at IS NULL AND created_at < ?", s.Now().Add(-waitingClientTTL)).Delete(&oauthClientRow{}).Error; err != nil {
			return err
		}
		var waiting int64
		if err := tx.Model(&oauthClientRow{}).Where("consented_at IS NULL").Count(&waiting).Error; err != nil {
			return err
		}
		if waiting >= maxWaitingClients {
			return ErrTooManyClients
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return OAuthClient{}, fmt.Errorf("register client %q: %w", name, err)
	}
	return row.toClient(), nil
}

// OAuthClientByID returns a registered client, or ErrOAuthClient.
func (s *Store) OAuthClientByID(ctx context.Context, id string) (OAuthClient, error) {
	var row oauthClientRow
	err := s.read(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return OAuthClient{}, fmt.Errorf("client_id %q is not registered here: %w", id, ErrOAuthClient)
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("look up client %s: %w", id, err)
	}
	return row.toClient(), nil
}

// OAuthConsent is what a person agreed to: a client may act as their
// worker at one resource, with the code sent to one redirect URI.
type OAuthConsent struct {
	ClientID    string
	WorkerID    string
	RedirectURI string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	Resource  string
}

// CreateOAuthCode records a consent and returns the single-use code the
// client exchanges for tokens. The worker must be an active person.
func (s *Store) CreateOAuthCode(ctx context.Context, c OAuthConsent) (string, error) {
	code, hash, err := newSecret(OAuthCodePrefix)
	if err != nil {
		return "", err
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		if err := activePerson(tx, c.WorkerID); err != nil {
			return err
		}
		now := s.Now()
		res := tx.Model(&oauthClientRow{}).Where("id = ? AND consented_at IS NULL", c.ClientID).Update("consented_at", now)
		if res.Error != nil {
			return res.Error
		}
		if ok, err := exists(tx, &oauthClientRow{}, c.ClientID); err != nil || !ok {
			return errors.Join(err, fmt.Errorf("client_id %q is not registered here: %w", c.ClientID, ErrOAuthClient))
		}
		if err := tx.Where("expires_at <= ?", now.Add(-OAuthCodeTTL)).Delete(&oauthCodeRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&oauthCodeRow{Hash: hash, ClientID: c.ClientID, WorkerID: c.WorkerID, RedirectURI: c.RedirectURI,
			Challenge: c.Challenge, Resource: c.Resource, CreatedAt: now, ExpiresAt: now.Add(OAuthCodeTTL)}).Error
	})
	if err != nil {
		return "", fmt.Errorf("consent for %s: %w", c.WorkerID, err)
	}
	return code, nil
}

// activePerson refuses a worker that is gone, dismissed or an AI.
func activePerson(tx *gorm.DB, id string) error {
	var w workerRow
	if err := tx.Where("id = ?", id).Take(&w).Error; err != nil {
		return notFoundOr(err, "worker", id)
	}
	switch {
	case w.DismissedAt != nil:
		return fmt.Errorf("worker %s has been dismissed: %w", id, domain.ErrForbidden)
	case w.Kind != string(domain.WorkerHuman):
		return fmt.Errorf("%s is an AI worker; a person consents only for their own worker: %w", id, domain.ErrForbidden)
	}
	return nil
}

// OAuthExchange is a token request with an authorization code.
type OAuthExchange struct {
	ClientID    string
	Code        string
	RedirectURI string
	Verifier    string
	// Resource, if given, must be the one consented to (RFC 8707).
	Resource string
}

// OAuthTokens are what a token request gets.
type OAuthTokens struct {
	Access    string
	Refresh   string
	ExpiresIn time.Duration
	Resource  string
	WorkerID  string
}

// ExchangeOAuthCode trades a code for tokens, once. The client, redirect
// URI and PKCE verifier must be the consent's; a code presented a second
// time revokes what its first exchange gave.
func (s *Store) ExchangeOAuthCode(ctx context.Context, x OAuthExchange) (OAuthTokens, error) {
	var out OAuthTokens
	var replayed bool
	err := s.write(ctx, func(tx *gorm.DB) error {
		out, replayed = OAuthTokens{}, false
		var code oauthCodeRow
		err := tx.Where("hash = ? AND expires_at > ?", hashToken(x.Code), s.Now()).Take(&code).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("the authorization code is unknown or expired: %w", ErrOAuthGrant)
		}
		if err != nil {
			return err
		}
		if err := code.check(x); err != nil {
			return err
		}
		if code.UsedAt != nil {
			replayed = true
			return s.revokeGrant(tx, code.GrantID)
		}
		grant, _, err := newSecret("")
		if err != nil {
			return err
		}
		now := s.Now()
		if err := tx.Model(&oauthCodeRow{}).Where("hash = ?", code.Hash).Updates(map[string]any{"used_at": now, "grant_id": grant}).Error; err != nil {
			return err
		}
		out, err = s.mintOAuth(tx, oauthRefreshRow{GrantID: grant, ClientID: code.ClientID, WorkerID: code.WorkerID, Resource: code.Resource})
		return err
	})
	if err == nil && replayed {
		err = fmt.Errorf("the authorization code was already used; the tokens it gave are revoked: %w", ErrOAuthGrant)
	}
	if err != nil {
		return OAuthTokens{}, fmt.Errorf("exchange code: %w", err)
	}
	return out, nil
}

// check compares a token request with what was consented to.
func (c oauthCodeRow) check(x OAuthExchange) error {
	sum := sha256.Sum256([]byte(x.Verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	switch {
	case c.ClientID != x.ClientID:
		return fmt.Errorf("the authorization code was issued to another client: %w", ErrOAuthGrant)
	case c.RedirectURI != x.RedirectURI:
		return fmt.Errorf("redirect_uri %q is not the one the code was issued for: %w", x.RedirectURI, ErrOAuthGrant)
	case subtle.ConstantTimeCompare([]byte(challenge), []byte(c.Challenge)) != 1:
		return fmt.Errorf("code_verifier does not match the code_challenge (PKCE S256): %w", ErrOAuthGrant)
	case x.Resource != "" && x.Resource != c.Resource:
		return fmt.Errorf("resource %q is not the one consented to (%s): %w", x.Resource, c.Resource, ErrOAuthTarget)
	}
	return nil
}

// RefreshOAuthToken rotates a refresh token: the old one and its access
// token end, a new pair is returned. A rotated token presented again is
// taken for stolen, and its whole grant is revoked.
func (s *Store) RefreshOAuthToken(ctx context.Context, clientID, refresh, resource string) (OAuthTokens, error) {
	var out OAuthTokens
	var replayed bool
	err := s.write(ctx, func(tx *gorm.DB) error {
		out, replayed = OAuthTokens{}, false
		var row oauthRefreshRow
		err := tx.Where("hash = ? AND expires_at > ? AND revoked_at IS NULL", hashToken(refresh), s.Now()).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("the refresh token is unknown, expired or revoked: %w", ErrOAuthGrant)
		}
		if err != nil {
			return err
		}
		switch {
		case row.ClientID != clientID:
			return fmt.Errorf("the refresh token was issued to another client: %w", ErrOAuthGrant)
		case resource != "" && resource != row.Resource:
			return fmt.Errorf("resource %q is not the one consented to (%s): %w", resource, row.Resource, ErrOAuthTarget)
		case row.UsedAt != nil:
			replayed = true
			return s.revokeGrant(tx, row.GrantID)
		}
		var n int64
		if err := tx.Model(&tokenRow{}).Where("hash = ? AND revoked_at IS NOT NULL", row.TokenHash).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("this client's access was revoked; connect it again: %w", ErrOAuthGrant)
		}
		now := s.Now()
		if err := tx.Model(&oauthRefreshRow{}).Where("hash = ?", row.Hash).Update("used_at", now).Error; err != nil {
			return err
		}
		if err := tx.Model(&tokenRow{}).Where("hash = ? AND revoked_at IS NULL", row.TokenHash).Update("revoked_at", now).Error; err != nil {
			return err
		}
		if err := s.sweepGrant(tx, row.GrantID); err != nil {
			return err
		}
		out, err = s.mintOAuth(tx, oauthRefreshRow{GrantID: row.GrantID, ClientID: row.ClientID, WorkerID: row.WorkerID, Resource: row.Resource})
		return err
	})
	if err == nil && replayed {
		err = fmt.Errorf("the refresh token was already used; this client's access is revoked, connect it again: %w", ErrOAuthGrant)
	}
	if err != nil {
		return OAuthTokens{}, fmt.Errorf("refresh token: %w", err)
	}
	return out, nil
}

// mintOAuth creates an access token and the refresh token that renews
// it, for the grant tmpl names. The access token's label names the
// client, so `token list` says which client holds it.
func (s *Store) mintOAuth(tx *gorm.DB, tmpl oauthRefreshRow) (OAuthTokens, error) {
	if err := activePerson(tx, tmpl.WorkerID); err != nil {
		return OAuthTokens{}, err
	}
	var client oauthClientRow
	if err := tx.Where("id = ?", tmpl.ClientID).Take(&client).Error; err != nil {
		return OAuthTokens{}, fmt.Errorf("client %s: %w", tmpl.ClientID, err)
	}
	access, accessHash, err := newToken(TokenPrefix)
	if err != nil {
		return OAuthTokens{}, err
	}
	refresh, refreshHash, err := newSecret(OAuthRefreshPrefix)
	if err != nil {
		return OAuthTokens{}, err
	}
	now := s.Now()
	exp := now.Add(OAuthAccessTTL)
	if err := tx.Create(&tokenRow{Hash: accessHash, WorkerID: tmpl.WorkerID, Kind: TokenOAuth, Label: "oauth: " + client.Name,
		CreatedAt: now, ExpiresAt: &exp}).Error; err != nil {
		return OAuthTokens{}, err
	}
	tmpl.Hash, tmpl.TokenHash, tmpl.CreatedAt, tmpl.ExpiresAt = refreshHash, accessHash, now, now.Add(OAuthRefreshTTL)
	if err := tx.Create(&tmpl).Error; err != nil {
		return OAuthTokens{}, err
	}
	return OAuthTokens{Access: access, Refresh: refresh, ExpiresIn: OAuthAccessTTL, Resource: tmpl.Resource, WorkerID: tmpl.WorkerID}, nil
}

// RevokeOAuthToken ends the grant an access or refresh token belongs to,
// at its client's request (RFC 7009). A token this server does not know
// as a client's is no error: there is nothing left to end.
func (s *Store) RevokeOAuthToken(ctx context.Context, clientID, tok string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		q := tx.Where("token_hash = ?", hashToken(tok))
		if strings.HasPrefix(tok, OAuthRefreshPrefix) {
			q = tx.Where("hash = ?", hashToken(tok))
		}
		var row oauthRefreshRow
		err := q.Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.ClientID != clientID {
			return fmt.Errorf("the token was issued to another client: %w", ErrOAuthClient)
		}
		return s.revokeGrant(tx, row.GrantID)
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// sweepGrant drops what rotation leaves behind, so an hourly refresh
// does not pile up rows: the access tokens of a grant's rotated refresh
// tokens once they are past their hour, and refresh tokens past theirs.
// A rotated refresh token itself stays until it expires, to catch its
// replay.
func (s *Store) sweepGrant(tx *gorm.DB, grant string) error {
	now := s.Now()
	rotated := tx.Model(&oauthRefreshRow{}).Where("grant_id = ? AND used_at IS NOT NULL", grant).Select("token_hash")
	if err := tx.Where("hash IN (?) AND kind = ? AND expires_at <= ?", rotated, TokenOAuth, now).Delete(&tokenRow{}).Error; err != nil {
		return err
	}
	return tx.Where("expires_at <= ?", now).Delete(&oauthRefreshRow{}).Error
}

// revokeGrant ends every refresh and access token of a grant.
func (s *Store) revokeGrant(tx *gorm.DB, grant string) error {
	if grant == "" {
		return nil
	}
	now := s.Now()
	tokens := tx.Model(&oauthRefreshRow{}).Where("grant_id = ?", grant).Select("token_hash")
	if err := tx.Model(&tokenRow{}).Where("hash IN (?) AND revoked_at IS NULL", tokens).Update("revoked_at", now).Error; err != nil {
		return err
	}
	return tx.Model(&oauthRefreshRow{}).Where("grant_id = ? AND revoked_at IS NULL", grant).Update("revoked_at", now).Error
}

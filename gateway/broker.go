package gateway

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/helixml/helix-org/domain"
)

// broker turns a server's stored credential into the token a call
// carries: a static bearer as it is, OAuth client credentials exchanged
// at the token URL, a GitHub App's key into an installation token. Minted
// tokens are kept until shortly before they lapse. Nothing it holds
// leaves helix-org but in the Authorization header (or, for a stdio
// server, the environment of the process helix-org runs for it).
type broker struct {
	client *http.Client // through safedial
	now    func() time.Time
	mu     sync.Mutex
	tokens map[string]minted
}

// minted is a token and when it stops being good (zero: never).
type minted struct {
	token   string
	expires time.Time
}

// early is how long before its expiry a minted token is replaced, so a
// call never goes out with one about to lapse.
const early = 5 * time.Minute

func (m minted) fresh(now time.Time) bool {
	return m.token != "" && (m.expires.IsZero() || now.Add(early).Before(m.expires))
}

// token is the credential to send to server now; "" when it has none.
func (b *broker) token(ctx context.Context, server string, a *domain.MCPAuth) (minted, error) {
	if a == nil {
		return minted{}, nil
	}
	if a.Type == domain.AuthBearer {
		return minted{token: a.Token}, nil
	}
	b.mu.Lock()
	m := b.tokens[server]
	b.mu.Unlock()
	if m.fresh(b.now()) {
		return m, nil
	}
	var err error
	switch a.Type {
	case domain.AuthOAuthClient:
		m, err = b.clientCredentials(ctx, a)
	case domain.AuthGitHubApp:
		m, err = b.installationToken(ctx, a)
	default:
		err = domain.Invalid("auth.type", "%q is not one of %s", a.Type, strings.Join(domain.AuthTypes, ", "))
	}
	if err != nil {
		return minted{}, fmt.Errorf("credential of mcp server %s (%s): %w", server, a.Type, err)
	}
	b.mu.Lock()
	b.tokens[server] = m
	b.mu.Unlock()
	return m, nil
}

// forget drops what was minted for server (removed, or its token refused).
func (b *broker) forget(server string) {
	b.mu.Lock()
	delete(b.tokens, server)
	b.mu.Unlock()
}

func (b *broker) clientCredentials(ctx context.Context, a *domain.MCPAuth) (minted, error) {
	cfg := clientcredentials.Config{ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenURL, Scopes: a.Scopes}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, b.client))
	if err != nil {
		return minted{}, errors.New(redactOAuth(err.Error(), a))
	}
	return minted{token: tok.AccessToken, expires: tok.Expiry}, nil
}

// redactOAuth keeps the client secret out of an error that quotes a
// request or an answer.
func redactOAuth(msg string, a *domain.MCPAuth) string {
	if a.ClientSecret != "" {
		msg = strings.ReplaceAll(msg, a.ClientSecret, domain.Redacted)
	}
	return msg
}

// installationToken signs a JWT as the app and exchanges it for a token of
// the installation (POST /app/installations/{id}/access_tokens).
func (b *broker) installationToken(ctx context.Context, a *domain.MCPAuth) (minted, error) {
	jwt, err := appJWT(a, b.now())
	if err != nil {
		return minted{}, err
	}
	api := strings.TrimRight(a.APIURL, "/")
	if api == "" {
		api = domain.DefaultGitHubAPI
	}
	url := api + "/app/installations/" + a.InstallationID.String() + "/access_tokens"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return minted{}, err
	}
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := b.client.Do(req)
	if err != nil {
		return minted{}, fmt.Errorf("mint installation token: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return minted{}, fmt.Errorf("mint installation token: %s answered %s: %.200s", url, resp.Status, body)
	}
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		return minted{}, fmt.Errorf("mint installation token: %s answered without a token", url)
	}
	return minted{token: out.Token, expires: out.ExpiresAt}, nil
}

// appJWT is the app's RS256 JSON Web Token, as GitHub asks for it: issued
// a minute in the past (clock drift), for nine minutes (ten at most).
func appJWT(a *domain.MCPAuth, now time.Time) (string, error) {
	key, err := parseKey(a.PrivateKey)
	if err != nil {
		return "", domain.Invalid("auth.private_key", "%v", err)
	}
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": a.AppID.String()})
	if err != nil {
		return "", err
	}
	signing := head + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign app JWT: %w", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// parseKey reads a PEM RSA private key, PKCS#1 (GitHub's download) or PKCS#8.
func parseKey(p string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("is not a PEM private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("is not an RSA private key (PKCS#1 or PKCS#8)")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("is not an RSA private key")
	}
	return rk, nil
}

// withToken adds the broker's current token to every request.
type withToken struct {
	base  http.RoundTripper
	token func(ctx context.Context) (string, error)
}

func (t withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := t.token(r.Context())
	if err != nil {
		return nil, err
	}
	if tok == "" {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.base.RoundTrip(r)
}

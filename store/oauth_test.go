package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestOAuthGrants: what ends a code or a client's access — time, the
// person's dismissal, a revoked token — and what a consent may name.
func TestOAuthGrants(t *testing.T) {
	t.Parallel()
	const redirect = "http://127.0.0.1:9/cb"
	const resource = "http://127.0.0.1:8080/workers/w-maya/mcp"
	verifier := oauth2.GenerateVerifier()
	tests := []struct {
		name string
		// before runs between the consent and the exchange; refresh, if
		// set, runs between the exchange and a refresh.
		before, refresh func(t *testing.T, o sessionOrg, access string)
		worker          string
		wantErr         string
		wantIs          error
	}{
		{name: "a consent and its exchange", worker: "w-maya"},
		{name: "an AI worker's consent", worker: "w-bot", wantErr: "w-bot is an AI worker", wantIs: domain.ErrForbidden},
		{name: "a code past its 5 minutes", worker: "w-maya", wantErr: "the authorization code is unknown or expired", wantIs: store.ErrOAuthGrant,
			before: func(t *testing.T, o sessionOrg, _ string) { o.clock.Advance(store.OAuthCodeTTL + time.Second) }},
		{name: "a person dismissed since the consent", worker: "w-maya", wantErr: "w-maya has been dismissed", wantIs: domain.ErrForbidden,
			before: func(t *testing.T, o sessionOrg, _ string) { dismiss(t, o) }},
		{name: "an access token revoked with token revoke", worker: "w-maya", wantErr: "this client's access was revoked", wantIs: store.ErrOAuthGrant,
			refresh: func(t *testing.T, o sessionOrg, access string) {
				info, err := o.st.VerifyToken(t.Context(), access)
				if err != nil || info.Kind != store.TokenOAuth {
					t.Fatalf("the access token: %+v, %v", info, err)
				}
				if _, err := o.st.RevokeTokens(t.Context(), store.TokenSelection{Worker: "w-maya"}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a refresh token past its access token's hour", worker: "w-maya",
			refresh: func(t *testing.T, o sessionOrg, _ string) { o.clock.Advance(2 * store.OAuthAccessTTL) }},
		{name: "a refresh token past its 30 days", worker: "w-maya", wantErr: "the refresh token is unknown, expired or revoked", wantIs: store.ErrOAuthGrant,
			refresh: func(t *testing.T, o sessionOrg, _ string) { o.clock.Advance(store.OAuthRefreshTTL + time.Second) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newSessionOrg(t)
			ctx := t.Context()
			c, err := o.st.RegisterOAuthClient(ctx, "cli", []string{redirect})
			if err != nil {
				t.Fatal(err)
			}
			code, err := o.st.CreateOAuthCode(ctx, store.OAuthConsent{ClientID: c.ID, WorkerID: tt.worker, RedirectURI: redirect,
				Challenge: oauth2.S256ChallengeFromVerifier(verifier), Resource: resource})
			var got store.OAuthTokens
			if err == nil && tt.before != nil {
				tt.before(t, o, "")
			}
			if err == nil {
				got, err = o.st.ExchangeOAuthCode(ctx, store.OAuthExchange{ClientID: c.ID, Code: code, RedirectURI: redirect, Verifier: verifier})
			}
			if err == nil && tt.refresh != nil {
				tt.refresh(t, o, got.Access)
				got, err = o.st.RefreshOAuthToken(ctx, c.ID, got.Refresh, "")
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if info, err := o.st.VerifyToken(ctx, got.Access); err != nil || info.WorkerID != "w-maya" || got.Resource != resource {
					t.Errorf("token for %+v (%v), resource %s", info, err, got.Resource)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %q (%v)", err, tt.wantErr, tt.wantIs)
			}
		})
	}
}

// TestOAuthClientRedirects: a client's redirect URIs match exactly, but
// for a loopback URI's port (RFC 8252 §7.3).
func TestOAuthClientRedirects(t *testing.T) {
	t.Parallel()
	c := store.OAuthClient{RedirectURIs: []string{"http://127.0.0.1:9/cb", "https://app.example.com/cb"}}
	for uri, want := range map[string]bool{
		"http://127.0.0.1:9/cb":          true,
		"http://127.0.0.1:51234/cb":      true,
		"https://app.example.com/cb":     true,
		"http://127.0.0.1:9/other":       false,
		"http://localhost:9/cb":          false,
		"https://app.example.com:444/cb": false,
		"https://app.example.com/cb?x=1": false,
		"http://app.example.com/cb":      false,
		"":                               false,
	} {
		if got := c.AllowsRedirect(uri); got != want {
			t.Errorf("AllowsRedirect(%q) = %v, want %v", uri, got, want)
		}
	}
}

func dismiss(t *testing.T, o sessionOrg) {
	t.Helper()
	if _, err := o.st.DismissWorker(t.Context(), "w-owner", "w-maya"); err != nil {
		t.Fatal(err)
	}
}

// TestOAuthRefreshSweeps: a client refreshing every hour leaves one
// access token of its grant in the token list, not one per hour.
func TestOAuthRefreshSweeps(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	ctx := t.Context()
	verifier := oauth2.GenerateVerifier()
	c, err := o.st.RegisterOAuthClient(ctx, "cli", []string{"http://127.0.0.1:9/cb"})
	if err != nil {
		t.Fatal(err)
	}
	code, err := o.st.CreateOAuthCode(ctx, store.OAuthConsent{ClientID: c.ID, WorkerID: "w-maya", RedirectURI: "http://127.0.0.1:9/cb",
		Challenge: oauth2.S256ChallengeFromVerifier(verifier), Resource: "r"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.st.ExchangeOAuthCode(ctx, store.OAuthExchange{ClientID: c.ID, Code: code, RedirectURI: "http://127.0.0.1:9/cb", Verifier: verifier})
	for i := 0; err == nil && i < 3; i++ {
		o.clock.Advance(2 * store.OAuthAccessTTL)
		got, err = o.st.RefreshOAuthToken(ctx, c.ID, got.Refresh, "r")
	}
	if err != nil {
		t.Fatal(err)
	}
	all, err := o.st.ListTokens(ctx, store.TokenQuery{Worker: "w-maya", All: true})
	if err != nil {
		t.Fatal(err)
	}
	var oauth []store.Token
	for _, tk := range all {
		if tk.Kind == store.TokenOAuth {
			oauth = append(oauth, tk)
		}
	}
	if len(oauth) != 1 || oauth[0].RevokedAt != nil {
		t.Errorf("after three refreshes Maya's OAuth tokens are %+v, want the one live token", oauth)
	}
}

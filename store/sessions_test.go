package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// sessionOrg is a store with the owner, a human w-maya, an AI w-bot, an
// operator token for each and an activation-style token for w-bot.
type sessionOrg struct {
	st              *store.Store
	clock           *storetest.Clock
	owner, maya, ai string
	activation      string
}

func newSessionOrg(t *testing.T) sessionOrg {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	for _, w := range []domain.Worker{
		{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Maya"},
		{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-a", Name: "Bot"},
	} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	tok := func(worker, kind string) string {
		s, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: worker, Kind: kind, TTL: 48 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return sessionOrg{st: st, clock: clock, owner: tok("w-owner", store.TokenOperator), maya: tok("w-maya", store.TokenOperator),
		ai: tok("w-bot", store.TokenOperator), activation: tok("w-bot", store.TokenActivation)}
}

func TestSignInWithToken(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	mayaActivation, err := o.st.CreateToken(t.Context(), store.TokenSpec{WorkerID: "w-maya", Kind: store.TokenActivation})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		token      string
		wantWorker string
		wantIs     error
		wantText   string
	}{
		{name: "owner", token: o.owner, wantWorker: "w-owner"},
		{name: "human worker", token: o.maya, wantWorker: "w-maya"},
		{name: "unknown token", token: store.TokenPrefix + strings.Repeat("A", 43), wantIs: store.ErrBadToken},
		{name: "not a token", token: "hello", wantIs: store.ErrBadToken},
		{name: "AI worker", token: o.ai, wantIs: domain.ErrForbidden, wantText: "w-bot is an AI worker; only people sign in"},
		{name: "activation token of an AI", token: o.activation, wantIs: domain.ErrForbidden, wantText: "token of an agent run"},
		{name: "activation-kind token of a human", token: mayaActivation, wantIs: domain.ErrForbidden, wantText: "token of an agent run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, sess, err := o.st.SignInWithToken(t.Context(), tt.token, 12*time.Hour)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.wantIs, tt.wantText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(id, store.SessionPrefix) || sess.WorkerID != tt.wantWorker {
				t.Fatalf("session %q for %q, want an hxs_ id for %s", id, sess.WorkerID, tt.wantWorker)
			}
			if want := o.clock.Now().Add(12 * time.Hour); !sess.ExpiresAt.Equal(want) {
				t.Errorf("expires %v, want %v", sess.ExpiresAt, want)
			}
			got, err := o.st.VerifySession(t.Context(), id)
			if err != nil || got.WorkerID != tt.wantWorker {
				t.Errorf("VerifySession = %+v, %v; want %s", got, err, tt.wantWorker)
			}
		})
	}
}

// TestSessionEnds covers every way a session stops working.
func TestSessionEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// ttl is the session's; longer than the token's 48h where the
		// token must be what ends it.
		ttl time.Duration
		end func(t *testing.T, o sessionOrg, id string)
	}{
		{"its expiry passes", 12 * time.Hour, func(t *testing.T, o sessionOrg, _ string) { o.clock.Advance(12*time.Hour + time.Second) }},
		{"sign-out", 12 * time.Hour, func(t *testing.T, o sessionOrg, id string) {
			if err := o.st.EndSession(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}},
		{"its token is revoked", 12 * time.Hour, func(t *testing.T, o sessionOrg, _ string) {
			if err := o.st.RevokeToken(t.Context(), o.maya); err != nil {
				t.Fatal(err)
			}
		}},
		{"its token expires", 96 * time.Hour, func(t *testing.T, o sessionOrg, _ string) { o.clock.Advance(47*time.Hour + time.Second) }},
		{"its worker is dismissed", 12 * time.Hour, func(t *testing.T, o sessionOrg, _ string) {
			if _, err := o.st.DismissWorker(t.Context(), "w-owner", "w-maya"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newSessionOrg(t)
			id, _, err := o.st.SignInWithToken(t.Context(), o.maya, tt.ttl)
			if err != nil {
				t.Fatal(err)
			}
			// A second session on another token must survive, so the end
			// is this session's and not the whole table's.
			ownerToken, err := o.st.CreateToken(t.Context(), store.TokenSpec{WorkerID: "w-owner", Kind: store.TokenOperator})
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := o.st.SignInWithToken(t.Context(), ownerToken, 96*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			o.clock.Advance(time.Hour)
			if _, err := o.st.VerifySession(t.Context(), id); err != nil {
				t.Fatalf("before: %v", err)
			}
			tt.end(t, o, id)
			if _, err := o.st.VerifySession(t.Context(), id); !errors.Is(err, store.ErrNoSession) {
				t.Errorf("after: err = %v, want ErrNoSession", err)
			}
			if _, err := o.st.VerifySession(t.Context(), other); err != nil {
				t.Errorf("the owner's session ended too: %v", err)
			}
		})
	}
}

func TestSignInCode(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	ctx := t.Context()
	code, err := o.st.CreateSignInCode(ctx, o.owner, store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(code, store.SignInCodePrefix) {
		t.Fatalf("code %q lacks the hxc_ prefix", code)
	}
	id, sess, err := o.st.SignInWithCode(ctx, code, time.Hour)
	if err != nil || sess.WorkerID != "w-owner" {
		t.Fatalf("SignInWithCode = %+v, %v", sess, err)
	}
	if _, err := o.st.VerifySession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.st.SignInWithCode(ctx, code, time.Hour); !errors.Is(err, store.ErrBadSignInCode) {
		t.Errorf("second use: err = %v, want ErrBadSignInCode", err)
	}

	late, err := o.st.CreateSignInCode(ctx, o.owner, store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	o.clock.Advance(store.SignInCodeTTL)
	if _, _, err := o.st.SignInWithCode(ctx, late, time.Hour); !errors.Is(err, store.ErrBadSignInCode) {
		t.Errorf("expired code: err = %v, want ErrBadSignInCode", err)
	}

	revoked, err := o.st.CreateSignInCode(ctx, o.maya, store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.st.RevokeToken(ctx, o.maya); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.st.SignInWithCode(ctx, revoked, time.Hour); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("code of a revoked token: err = %v, want ErrBadToken", err)
	}
	if _, err := o.st.CreateSignInCode(ctx, o.ai, store.SignInCodeTTL); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("code for an AI worker: err = %v, want ErrForbidden", err)
	}
	if _, _, err := o.st.SignInWithCode(ctx, "hxc_nope", time.Hour); !errors.Is(err, store.ErrBadSignInCode) {
		t.Errorf("unknown code: err = %v, want ErrBadSignInCode", err)
	}
}

// TestSessionSecretsNotStored: neither a session id nor a sign-in code is
// anywhere in the bytes SQLite wrote.
func TestSessionSecretsNotStored(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	code, err := o.st.CreateSignInCode(t.Context(), o.owner, store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	unused, err := o.st.CreateSignInCode(t.Context(), o.owner, store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := o.st.SignInWithCode(t.Context(), code, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(o.st.Path() + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{id, code, unused, strings.TrimPrefix(id, store.SessionPrefix), strings.TrimPrefix(unused, store.SignInCodePrefix)} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret %q in plain text", filepath.Base(f), secret)
			}
		}
	}
}

// TestRevokeUnusedTokens: of a worker's tokens with one label, those no
// live session stands on are revoked; one a browser signed in with, other
// labels' and other workers' stay live.
func TestRevokeUnusedTokens(t *testing.T) {
	t.Parallel()
	o := newSessionOrg(t)
	ctx := t.Context()
	mint := func(worker, label string) string {
		tok, err := o.st.CreateToken(ctx, store.TokenSpec{WorkerID: worker, Kind: store.TokenOperator, TTL: time.Hour, Label: label})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	unused, followed, ended := mint("w-owner", "web sign-in"), mint("w-owner", "web sign-in"), mint("w-owner", "web sign-in")
	other, maya := mint("w-owner", "call"), mint("w-maya", "web sign-in")
	if _, _, err := o.st.SignInWithToken(ctx, followed, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.st.SignInWithToken(ctx, ended, time.Minute); err != nil {
		t.Fatal(err)
	}
	o.clock.Advance(2 * time.Minute)

	n, err := o.st.RevokeUnusedTokens(ctx, "w-owner", "web sign-in")
	if err != nil || n != 2 {
		t.Fatalf("RevokeUnusedTokens = %d, %v; want 2 (the unused one and the one whose session ended)", n, err)
	}
	tests := []struct {
		name string
		tok  string
		live bool
	}{
		{"never followed", unused, false},
		{"its session ended", ended, false},
		{"a browser is signed in with it", followed, true},
		{"another label", other, true},
		{"another worker", maya, true},
	}
	for _, tt := range tests {
		_, err := o.st.VerifyToken(ctx, tt.tok)
		if live := err == nil; live != tt.live {
			t.Errorf("%s: live = %v (%v), want %v", tt.name, live, err, tt.live)
		}
	}
}

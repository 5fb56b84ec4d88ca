package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestListTokens: only live tokens by default, oldest first, with a public
// id that is a prefix of the hash, never the secret; All adds revoked and
// expired ones.
func TestListTokens(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	mint := func(label string, ttl time.Duration) string {
		t.Helper()
		tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator, TTL: ttl, Label: label})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		return tok
	}
	forever := mint("bootstrap", 0)
	short := mint("call", time.Minute)
	revoked := mint("chat", 0)
	if err := st.RevokeToken(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute) // short expires

	live, err := st.ListTokens(ctx, store.TokenQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Label != "bootstrap" || live[0].ExpiresAt != nil || live[0].WorkerID != store.OwnerWorker || live[0].Kind != store.TokenOperator {
		t.Fatalf("live tokens = %+v, want only the bootstrap one", live)
	}
	if len(live[0].ID) != store.TokenIDLen {
		t.Errorf("id %q is not %d characters", live[0].ID, store.TokenIDLen)
	}
	all, err := st.ListTokens(ctx, store.TokenQuery{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tok := range all {
		labels = append(labels, tok.Label)
		for _, secret := range []string{forever, short, revoked} {
			if tok.ID == secret || len(tok.ID) > store.TokenIDLen {
				t.Errorf("listed id %q looks like a secret", tok.ID)
			}
		}
	}
	if diff := cmp.Diff([]string{"bootstrap", "call", "chat"}, labels); diff != "" {
		t.Errorf("all tokens, oldest first (-want +got):\n%s", diff)
	}
	if all[2].RevokedAt == nil {
		t.Error("the revoked token shows no revocation time")
	}
}

// TestRevokeTokens: by id, or every live token of a worker; an id naming
// nothing live is an error, and a revoked token stops verifying.
func TestRevokeTokens(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	var toks []string
	for range 3 {
		tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator})
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	listed, _ := st.ListTokens(ctx, store.TokenQuery{})
	id := listed[0].ID

	got, err := st.RevokeTokens(ctx, store.TokenSelection{ID: id})
	if err != nil || len(got) != 1 || got[0].ID != id || got[0].RevokedAt == nil {
		t.Fatalf("revoke %s = %+v, %v", id, got, err)
	}
	if _, err := st.RevokeTokens(ctx, store.TokenSelection{ID: id}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("revoking it again: %v, want not found", err)
	}
	got, err = st.RevokeTokens(ctx, store.TokenSelection{Worker: store.OwnerWorker})
	if err != nil || len(got) != 2 {
		t.Fatalf("revoke --worker = %+v, %v; want the two left", got, err)
	}
	for _, tok := range toks {
		if _, err := st.VerifyToken(ctx, tok); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("a revoked token verifies: %v", err)
		}
	}
	if _, err := st.RevokeTokens(ctx, store.TokenSelection{Worker: store.OwnerWorker}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("revoking a worker with no live tokens: %v, want not found", err)
	}
}

// TestTokenLastUsed: verifying a token records when, at most once a minute.
func TestTokenLastUsed(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator})
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		ts, err := st.ListTokens(ctx, store.TokenQuery{})
		if err != nil || len(ts) != 1 {
			t.Fatalf("tokens = %+v, %v", ts, err)
		}
		return ts[0].LastUsedAt
	}
	if lastUsed() != nil {
		t.Fatal("a token never used has a last use")
	}
	first := clock.Now()
	verify := func() {
		t.Helper()
		if _, err := st.VerifyToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	verify()
	if got := lastUsed(); got == nil || !got.Equal(first) {
		t.Fatalf("last used = %v, want %v", got, first)
	}
	clock.Advance(30 * time.Second)
	verify()
	if got := lastUsed(); !got.Equal(first) {
		t.Errorf("last used moved to %v within the minute; want it written at most once a minute", got)
	}
	clock.Advance(31 * time.Second)
	verify()
	if got := lastUsed(); !got.Equal(clock.Now()) {
		t.Errorf("last used = %v after a minute, want %v", got, clock.Now())
	}
}

// TestTokenUseWrittenInTheBackground: a token's use is written without
// a reader asking (another process's `token list` sees it), and a use
// still waiting when the store closes is written, not lost.
func TestTokenUseWrittenInTheBackground(t *testing.T) {
	t.Parallel()
	db, keyFile := storetest.DB(t), t.TempDir()+"/key"
	ctx := t.Context()
	open := func() *store.Store {
		t.Helper()
		st, err := store.Open(ctx, db, store.Options{KeyFile: keyFile})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// What another process reads: its ListTokens flushes only its own
	// pending uses, never this store's.
	lastUsed := func(label string) *time.Time {
		t.Helper()
		other := open()
		defer other.Close()
		toks, err := other.ListTokens(ctx, store.TokenQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range toks {
			if tk.Label == label {
				return tk.LastUsedAt
			}
		}
		t.Fatalf("no token %q in %+v", label, toks)
		return nil
	}
	st := open()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	first, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator, Label: "first"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator, Label: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, first); err != nil {
		t.Fatal(err)
	}
	// Written by the store on its own: wait for it as another reader would.
	deadline := time.Now().Add(30 * time.Second)
	for lastUsed("first") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the first token's use was never written")
		}
		<-time.After(10 * time.Millisecond)
	}
	if _, err := st.Authenticate(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if lastUsed("second") == nil {
		t.Error("a use pending at close was lost")
	}
}

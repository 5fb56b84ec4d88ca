package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// claimed hires an AI worker into p-a and claims its hire activation.
func claimed(t *testing.T, st *store.Store, worker, activation string) string {
	t.Helper()
	if _, err := st.HireWorker(t.Context(), "w-owner", domain.Worker{ID: worker, Kind: domain.WorkerAI, PositionID: "p-a", Name: worker}, nil); err != nil {
		t.Fatal(err)
	}
	_, _, tok, err := st.Claim(t.Context(), worker, activation, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTokenPrefixes: operator tokens are hxo_, activation tokens hxa_,
// each verifies with its kind, and a token presented under the other
// prefix does not verify.
func TestTokenPrefixes(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	op, err := st.CreateToken(t.Context(), store.TokenSpec{WorkerID: "w-owner", Kind: store.TokenOperator})
	if err != nil {
		t.Fatal(err)
	}
	act := claimed(t, st, "w-bot", "a-1")
	tests := []struct {
		name, tok, prefix string
		want              store.TokenInfo
	}{
		{"operator", op, store.TokenPrefix, store.TokenInfo{WorkerID: "w-owner", Kind: store.TokenOperator}},
		{"activation", act, store.ActivationTokenPrefix, store.TokenInfo{WorkerID: "w-bot", Kind: store.TokenActivation, ActivationID: "a-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.HasPrefix(tt.tok, tt.prefix) || len(tt.tok) != len(tt.prefix)+43 {
				t.Errorf("token %q: want %s and 43 base64url characters", tt.tok, tt.prefix)
			}
			got, err := st.VerifyToken(t.Context(), tt.tok)
			if err != nil || got != tt.want {
				t.Errorf("VerifyToken = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	for _, forged := range []string{"hxo_" + strings.TrimPrefix(act, "hxa_"), "hxa_" + strings.TrimPrefix(op, "hxo_"), strings.TrimPrefix(op, "hxo_")} {
		if _, err := st.VerifyToken(t.Context(), forged); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("VerifyToken(%q) = %v, want ErrBadToken", forged, err)
		}
	}
	minted, err := st.CreateToken(t.Context(), store.TokenSpec{WorkerID: "w-bot", Kind: store.TokenActivation, ActivationID: "a-1"})
	if err != nil || !strings.HasPrefix(minted, store.ActivationTokenPrefix) {
		t.Errorf("CreateToken of kind activation = %q, %v; want an hxa_ token", minted, err)
	}
}

// TestRecordUsage: relayed calls add up per activation and become its
// token totals, read live while it runs and after it ends, in place of
// whatever the runtime reported; an activation without relayed calls
// keeps the runtime's numbers.
func TestRecordUsage(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	claimed(t, st, "w-bot", "a-1")
	claimed(t, st, "w-other", "a-2")
	calls := []struct {
		act, model string
		in, out    int64
	}{{"a-1", "m-big", 100, 10}, {"a-1", "m-small", 250, 7}, {"a-2", "m-big", 1, 1}}
	for _, c := range calls {
		if _, err := st.RecordUsage(ctx, c.act, store.Usage{Model: c.model, Input: c.in, Output: c.out}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecordUsage(ctx, "a-missing", store.Usage{Model: "m", Input: 1, Output: 1}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("usage of an unknown activation: %v, want not found", err)
	}
	mc, err := st.ModelCalls(ctx, "a-1")
	if err != nil || len(mc) != 2 || mc[0].Model != "m-big" || mc[0].WorkerID != "w-bot" || mc[1].InputTokens != 250 || mc[1].OutputTokens != 7 {
		t.Errorf("ModelCalls(a-1) = %+v, %v", mc, err)
	}
	running, err := st.GetActivation(ctx, "a-1")
	if err != nil || running.InputTokens != 350 || running.OutputTokens != 17 {
		t.Errorf("running a-1 = %+v, %v; want 350/17 from the ledger", running, err)
	}

	// The runtimes report something else: the ledger wins where it has
	// calls; an activation never relayed keeps its runtime's report.
	claimed(t, st, "w-third", "a-3")
	for id, reported := range map[string]int64{"a-1": 9, "a-3": 5} {
		a, err := st.GetActivation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		a.Status, a.InputTokens, a.OutputTokens = domain.ActivationSucceeded, reported, reported
		exit := domain.Event{StreamID: domain.ActivationStreamPrefix + a.WorkerID, Source: a.WorkerID, Message: domain.Message{Body: "exit"}}
		if err := st.FinishActivation(ctx, a, exit); err != nil {
			t.Fatal(err)
		}
	}
	acts, err := st.ListActivations(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, a := range acts {
		got[a.ID] = [2]int64{a.InputTokens, a.OutputTokens}
	}
	want := map[string][2]int64{"a-1": {350, 17}, "a-2": {1, 1}, "a-3": {5, 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("activation tokens (-want +got):\n%s", diff)
	}
}

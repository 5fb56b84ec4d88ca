package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// TestHeldCalls: the pending requests, oldest first; a decided or
// expired one is no longer held.
func TestHeldCalls(t *testing.T) {
	t.Parallel()
	st, clock := approvalOrg(t)
	first := request(t, st, "w-ai", `{"id":"w-peer"}`)
	clock.Advance(time.Minute)
	second := request(t, st, "w-bot", `{"id":"w-peer"}`)
	ids := func() []string {
		t.Helper()
		held, err := st.HeldCalls(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range held {
			out = append(out, a.ID+" "+a.WorkerID+" "+a.Approver)
		}
		return out
	}
	if diff := cmp.Diff([]string{first.ID + " w-ai w-lead", second.ID + " w-bot w-owner"}, ids()); diff != "" {
		t.Errorf("held calls (-want +got):\n%s", diff)
	}
	if _, err := st.DecideApproval(t.Context(), "w-lead", first.ID, domain.DecisionDeny, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{second.ID + " w-bot w-owner"}, ids()); diff != "" {
		t.Errorf("after the denial (-want +got):\n%s", diff)
	}
	clock.Advance(2 * time.Hour)
	if got := ids(); len(got) != 0 {
		t.Errorf("past expiry: %v, want none held", got)
	}
}

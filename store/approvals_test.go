package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// approvalOrg is seed plus a chart with a person between the owner and
// an AI desk, and an AI with no person above it but the owner:
//
//	p-a (w-lead human) → p-b (w-ai ai, w-peer human)
//	p-c (w-bot ai), reports to the owner
func approvalOrg(t *testing.T) (*store.Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-b", RoleID: "r-a", Title: "B", ReportsTo: "p-a"})
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-c", RoleID: "r-a", Title: "C"})
	for _, w := range []domain.Worker{
		{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "lead"},
		{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-b", Name: "ai"},
		{ID: "w-peer", Kind: domain.WorkerHuman, PositionID: "p-b", Name: "peer"},
		{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-c", Name: "bot"},
	} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	return st, clock
}

func request(t *testing.T, st *store.Store, worker, args string) domain.Approval {
	t.Helper()
	canon, hash, err := domain.CanonicalArgs([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.RequestApproval(t.Context(), domain.Approval{WorkerID: worker, Tool: "dismiss_worker", Arguments: canon, ArgsHash: hash, Why: "grant requires approval"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestApprovalGoesToTheNearestPerson: the approver is the nearest human
// above the requester, else the owner, and is told in its inbox.
func TestApprovalGoesToTheNearestPerson(t *testing.T) {
	t.Parallel()
	st, _ := approvalOrg(t)
	for _, c := range []struct{ worker, approver string }{{"w-ai", "w-lead"}, {"w-bot", "w-owner"}, {"w-lead", "w-owner"}} {
		a := request(t, st, c.worker, `{ "id" : "w-peer" }`)
		if a.Approver != c.approver || a.State != domain.ApprovalPending || string(a.Arguments) != `{"id":"w-peer"}` || !strings.HasPrefix(a.ID, "ap-") {
			t.Errorf("%s's request = %+v, want pending for %s with canonical arguments", c.worker, a, c.approver)
		}
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream(c.approver)}})
		if err != nil || len(evs) == 0 || evs[len(evs)-1].CausedBy != a.ID || !strings.Contains(evs[len(evs)-1].Message.Body, "decide_approval") {
			t.Errorf("%s's inbox = %+v, %v; want a notice of %s", c.approver, evs, err, a.ID)
		}
	}
}

// TestDecideApproval: who may decide, and that a request moves out of
// pending once, so replays and late decisions change nothing.
func TestDecideApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		actor    string
		decision domain.ApprovalDecision
		before   func(t *testing.T, st *store.Store, clock *storetest.Clock, id string)
		want     domain.ApprovalState
		wantErr  string
		wantIs   error
	}{
		{name: "approver approves", actor: "w-lead", decision: domain.DecisionApprove, want: domain.ApprovalApproved},
		{name: "owner denies", actor: "w-owner", decision: domain.DecisionDeny, want: domain.ApprovalDenied},
		{name: "requester cannot", actor: "w-ai", decision: domain.DecisionApprove, wantErr: "cannot decide its own", wantIs: domain.ErrForbidden},
		{name: "an AI worker cannot", actor: "w-bot", decision: domain.DecisionApprove, wantErr: "only a person decides", wantIs: domain.ErrForbidden},
		{name: "a peer cannot", actor: "w-peer", decision: domain.DecisionApprove, wantErr: "only w-lead (the approver)", wantIs: domain.ErrForbidden},
		{name: "replayed", actor: "w-lead", decision: domain.DecisionApprove, wantErr: "already approved", wantIs: domain.ErrConflict,
			before: func(t *testing.T, st *store.Store, _ *storetest.Clock, id string) {
				if _, err := st.DecideApproval(t.Context(), "w-lead", id, domain.DecisionApprove, ""); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "expired", actor: "w-lead", decision: domain.DecisionApprove, wantErr: "expired at 2026-03-04T11:00:00Z", wantIs: domain.ErrConflict,
			before: func(t *testing.T, _ *store.Store, clock *storetest.Clock, _ string) { clock.Advance(time.Hour) }},
		{name: "unknown", actor: "w-lead", decision: domain.DecisionApprove, wantErr: `approval "ap-nope": not found`, wantIs: domain.ErrNotFound,
			before: func(t *testing.T, st *store.Store, clock *storetest.Clock, id string) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, clock := approvalOrg(t)
			a := request(t, st, "w-ai", `{"id":"w-peer"}`)
			id := a.ID
			if c.before != nil {
				c.before(t, st, clock, id)
			}
			if c.name == "unknown" {
				id = "ap-nope"
			}
			got, err := st.DecideApproval(t.Context(), c.actor, id, c.decision, "a note")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, c.wantIs) {
					t.Fatalf("decide = %v, want %q (%v)", err, c.wantErr, c.wantIs)
				}
				return
			}
			if err != nil || got.State != c.want || got.DecidedBy != c.actor || got.Note != "a note" {
				t.Fatalf("decide = %+v, %v; want %s by %s", got, err, c.want, c.actor)
			}
		})
	}
}

// TestExpiredRequestsListAsExpired: a request past its TTL is shown, and
// stays, expired.
func TestExpiredRequestsListAsExpired(t *testing.T) {
	t.Parallel()
	st, clock := approvalOrg(t)
	a := request(t, st, "w-ai", `{"id":"w-peer"}`)
	clock.Advance(2 * time.Hour)
	pending, err := st.ListApprovals(t.Context(), "w-lead", store.ApprovalFilter{})
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending = %+v, %v; want none", pending, err)
	}
	expired, err := st.ListApprovals(t.Context(), "w-lead", store.ApprovalFilter{State: domain.ApprovalExpired})
	if err != nil || len(expired) != 1 || expired[0].ID != a.ID {
		t.Fatalf("expired = %+v, %v; want %s", expired, err, a.ID)
	}
	if others, _ := st.ListApprovals(t.Context(), "w-peer", store.ApprovalFilter{State: domain.ApprovalExpired}); len(others) != 0 {
		t.Errorf("w-peer sees %+v, want nothing of others' requests", others)
	}
}

// TestFinishApprovalRunsOnce: only an approved request is finished, once,
// and its requester is told the result.
func TestFinishApprovalRunsOnce(t *testing.T) {
	t.Parallel()
	st, _ := approvalOrg(t)
	a := request(t, st, "w-ai", `{"id":"w-peer"}`)
	if _, err := st.FinishApproval(t.Context(), a.ID, []byte(`{}`), ""); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("finish a pending request: %v, want conflict", err)
	}
	if _, err := st.DecideApproval(t.Context(), "w-lead", a.ID, domain.DecisionApprove, ""); err != nil {
		t.Fatal(err)
	}
	done, err := st.FinishApproval(t.Context(), a.ID, []byte(`{"ok":true}`), "")
	if err != nil || done.State != domain.ApprovalExecuted || string(done.Result) != `{"ok":true}` {
		t.Fatalf("finish = %+v, %v", done, err)
	}
	if _, err := st.FinishApproval(t.Context(), a.ID, []byte(`{}`), ""); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("finish twice: %v, want conflict", err)
	}
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream("w-ai")}})
	if len(evs) != 1 || !strings.Contains(evs[0].Message.Body, `Result: {"ok":true}`) {
		t.Errorf("requester's inbox = %+v, want one outcome with the result", evs)
	}
}

// TestConcurrentApprovalsDecideOnce: many approvers racing on one request
// move it out of pending exactly once.
func TestConcurrentApprovalsDecideOnce(t *testing.T) {
	t.Parallel()
	st, _ := approvalOrg(t)
	a := request(t, st, "w-ai", `{"id":"w-peer"}`)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		actor := "w-lead"
		if i%2 == 1 {
			actor = "w-owner"
		}
		go func() {
			_, err := st.DecideApproval(t.Context(), actor, a.ID, domain.DecisionApprove, "")
			errs <- err
		}()
	}
	won := 0
	for range n {
		if err := <-errs; err == nil {
			won++
		} else if !errors.Is(err, domain.ErrConflict) {
			t.Errorf("a losing decision: %v, want conflict", err)
		}
	}
	if won != 1 {
		t.Errorf("%d decisions won, want exactly 1", won)
	}
}

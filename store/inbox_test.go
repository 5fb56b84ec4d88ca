package store_test

import (
	"errors"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestNotifyCreatesTheInboxAndWakesItsWorker: the first notice creates the
// inbox with its worker subscribed; an AI worker is woken by every notice;
// the inbox is read by the worker, the owner and workers above it only.
func TestNotifyCreatesTheInboxAndWakesItsWorker(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-b", RoleID: "r-a", Title: "B", ReportsTo: "p-a"})
	for _, w := range []domain.Worker{
		{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "lead"},
		{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-b", Name: "ai"},
		{ID: "w-peer", Kind: domain.WorkerHuman, PositionID: "p-b", Name: "peer"},
	} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := st.PendingTriggers(ctx)
	for range 2 {
		if _, err := st.Notify(ctx, "w-ai", domain.Message{Subject: "approval", Body: "decide"}, "ap-1"); err != nil {
			t.Fatal(err)
		}
	}
	inbox := domain.InboxStream("w-ai")
	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{inbox}})
	if err != nil || len(evs) != 2 || evs[0].SourceKind != domain.SourceSystem || evs[0].CausedBy != "ap-1" || evs[0].Message.From != "helix-org" {
		t.Fatalf("inbox events = %+v, %v", evs, err)
	}
	members, _ := st.StreamMembers(ctx, inbox)
	if len(members) != 1 || members[0].WorkerID != "w-ai" {
		t.Errorf("inbox members = %v, want [w-ai]", members)
	}
	if after, _ := st.PendingTriggers(ctx); after != before+2 {
		t.Errorf("pending triggers %d → %d, want two more (each notice wakes the AI worker)", before, after)
	}
	for _, c := range []struct {
		reader string
		ok     bool
	}{{"w-ai", true}, {"w-owner", true}, {"w-lead", true}, {"w-peer", false}} {
		err := st.CheckReads(ctx, c.reader, inbox)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, domain.ErrForbidden)) {
			t.Errorf("%s reads %s: %v, want allowed=%v", c.reader, inbox, err, c.ok)
		}
	}
	if _, err := st.Notify(ctx, "w-nobody", domain.Message{Body: "x"}, ""); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("notify an unknown worker: %v, want not found", err)
	}
}

package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// rawDB opens the store's file a second time, to write what the store's
// own methods refuse — rows as a database from before the rules, or one
// edited by hand, could hold.
func rawDB(t *testing.T, st *store.Store) *gorm.DB {
	t.Helper()
	dialector := sqlite.Open(st.Path() + "?_busy_timeout=10000")
	if store.IsPostgres(st.Path()) {
		dialector = postgres.Open(st.Path())
	}
	db, err := gorm.Open(dialector, &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

// chartOrg bootstraps a store with a lead above a desk worker and a peer
// of the lead:
//
//	w-owner p-owner ─┬─ w-lead p-lead ── w-desk p-desk (ai)
//	                 └─ w-peer p-peer (ai)
func chartOrg(t *testing.T) *store.Store {
	t.Helper()
	st := storetest.New(t)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish", "grant_tool"}); err != nil {
		t.Fatal(err)
	}
	steps := []error{}
	add := func(_ any, err error) { steps = append(steps, err) }
	add(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-a", Title: "A"}))
	add(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lead", RoleID: "r-a", Title: "Lead"}))
	add(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-desk", RoleID: "r-a", Title: "Desk", ReportsTo: "p-lead"}))
	add(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-peer", RoleID: "r-a", Title: "Peer"}))
	add(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "Lead"}, nil))
	add(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-desk", Kind: domain.WorkerAI, PositionID: "p-desk", Name: "Desk"}, nil))
	add(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-peer", Kind: domain.WorkerAI, PositionID: "p-peer", Name: "Peer"}, nil))
	for _, err := range steps {
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	return st
}

// TestReadableStreamsSkipsSubscriptionsTheRulesRefuse: a subscription to
// s-org or a peer's log made before the reading rules reads nothing, and
// naming the stream is refused.
func TestReadableStreamsSkipsSubscriptionsTheRulesRefuse(t *testing.T) {
	t.Parallel()
	st := chartOrg(t)
	ctx := t.Context()
	db := rawDB(t, st)
	for _, s := range []string{domain.StreamOrg, "s-activations-w-peer", "s-activations-w-desk"} {
		if err := db.Exec("INSERT INTO subscriptions (worker_id, stream_id, created_at) VALUES (?, ?, ?)", "w-lead", s, time.Now()).Error; err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.ReadableStreams(ctx, "w-lead", nil)
	if err != nil || !slices.Equal(got, []string{"s-activations-w-desk"}) {
		t.Errorf("w-lead reads %v (%v), want only its report's log", got, err)
	}
	for _, s := range []string{domain.StreamOrg, "s-activations-w-peer"} {
		if _, err := st.ReadableStreams(ctx, "w-lead", []string{s}); !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("w-lead naming %s: %v, want forbidden", s, err)
		}
	}
}

// TestACycleInTheDataRefusesInsteadOfLooping: positions edited by hand into
// a cycle make every check that walks them fail, naming the cycle.
func TestACycleInTheDataRefusesInsteadOfLooping(t *testing.T) {
	t.Parallel()
	st := chartOrg(t)
	if err := rawDB(t, st).Exec("UPDATE positions SET reports_to = 'p-desk' WHERE id = 'p-lead'").Error; err != nil {
		t.Fatal(err)
	}
	err := st.CheckManages(t.Context(), "w-lead", "w-desk")
	if err == nil || !strings.Contains(err.Error(), "cycle: p-desk → p-lead → p-desk") {
		t.Errorf("CheckManages over a cycle = %v, want an error naming it", err)
	}
	if err := st.CheckManages(t.Context(), store.OwnerWorker, "w-desk"); err != nil {
		t.Errorf("the owner is refused over a cycle below it: %v", err)
	}
}

// TestBootstrapRestoresTheOwner: whatever was done to w-owner, bootstrap
// puts it back, says what it repaired and records it on s-org; run again,
// it has nothing to say.
func TestBootstrapRestoresTheOwner(t *testing.T) {
	t.Parallel()
	st := chartOrg(t)
	ctx := t.Context()
	tools := []string{"publish", "grant_tool"}
	if err := st.RevokeTool(ctx, "", store.OwnerWorker, "publish"); err != nil {
		t.Fatal(err)
	}
	soon := st.Now().Add(time.Second)
	if _, err := st.GrantTool(ctx, "", domain.Grant{WorkerID: store.OwnerWorker, Tool: "grant_tool", ExpiresAt: &soon}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DismissWorker(ctx, "", store.OwnerWorker); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, st)
	if err := db.Exec("UPDATE positions SET reports_to = 'p-lead' WHERE id = 'p-owner'").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE workers SET position_id = 'p-desk' WHERE id = 'w-owner'").Error; err != nil {
		t.Fatal(err)
	}

	res, err := st.BootstrapReport(ctx, tools)
	if err != nil {
		t.Fatal(err)
	}
	owner, repaired := res.Owner, res.Repaired
	if res.Created {
		t.Error("bootstrap of an existing owner says it created it")
	}
	for _, want := range []string{"w-owner was dismissed at", "w-owner was in p-desk; it is back in p-owner",
		"p-owner reported to p-lead; it is the root of the chart again", "granted 1 tool(s) it did not hold: publish",
		"1 grant(s) had an expiry and now never expire: grant_tool"} {
		if !slices.ContainsFunc(repaired, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("repaired = %q, want a line with %q", repaired, want)
		}
	}
	if !owner.Active() || owner.PositionID != store.OwnerPosition {
		t.Errorf("owner = %+v, want active in p-owner", owner)
	}
	gs, err := st.ListGrants(ctx, store.OwnerWorker)
	if err != nil || len(gs) != len(tools) {
		t.Fatalf("owner grants = %+v (%v)", gs, err)
	}
	for _, g := range gs {
		if g.ExpiresAt != nil {
			t.Errorf("owner grant %s expires %v, want never", g.Tool, g.ExpiresAt)
		}
	}
	if p, _ := st.GetPosition(ctx, store.OwnerPosition); p.ReportsTo != "" {
		t.Errorf("p-owner reports to %q, want no one", p.ReportsTo)
	}
	evs, _ := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	var c store.Change
	json.Unmarshal(evs[len(evs)-1].Message.Extra, &c)
	if c.Action != "restore_owner" || c.Target != store.OwnerWorker || c.Actor != "" {
		t.Errorf("last s-org change = %+v, want restore_owner of w-owner by the operator", c)
	}

	if again, err := st.BootstrapReport(ctx, tools); err != nil || len(again.Repaired) != 0 || again.Created {
		t.Errorf("second bootstrap = %+v (%v), want nothing repaired or created", again, err)
	}
}

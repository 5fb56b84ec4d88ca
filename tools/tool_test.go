package tools

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// t0 is when every test store's clock starts, so timestamps in outputs are
// exact values a table can state.
var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fixture is a bootstrapped store with a small org in it, acting as the
// owner. The clock moves only when a test advances it.
//
//	r-support "Support"   p-support "Support 1" (role r-support)
//	w-maya human "Maya"   w-echo ai "Echo" (both in p-support; w-echo's
//	s-activations-w-echo is followed by w-owner, who hired it)
//	s-inbox local stream, no members
type fixture struct {
	env   *Env
	clock *storetest.Clock
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureWith(t, testTransports)
}

// newFixtureWith is newFixture on the transport kinds ts: a test that
// needs a kind's real Admit gives its package's spec.
func newFixtureWith(t *testing.T, ts *domain.Transports) fixture {
	t.Helper()
	clock := storetest.NewClock(t0)
	// NoListen: several tests run in synctest bubbles (read_events' long
	// polls), and one store needs no other server's wake-ups.
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: ts, NoListen: true})
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, Names()); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	must(t)(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-support", Title: "Support", Content: "Answer tickets."}))
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-support", RoleID: "r-support", Title: "Support 1"}))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Maya"}, nil))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-echo", Kind: domain.WorkerAI, PositionID: "p-support", Name: "Echo"}, nil))
	must(t)(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-inbox", Name: "inbox", Transport: domain.Transport{Kind: domain.TransportLocal}}))
	return fixture{env: &Env{Store: st, Caller: store.OwnerWorker, Known: Names()}, clock: clock}
}

// withLead adds a line of the chart below the owner, for tests where a
// worker other than the owner acts on others:
//
//	p-lead "Lead" (r-lead) reports to p-owner; w-lead human "Lead" in it
//	p-desk "Desk" (r-desk) reports to p-lead; w-desk ai "Desk" in it
//
// p-support (w-maya, w-echo) reports to p-owner, so it is beside p-lead.
func withLead(t *testing.T, f fixture) {
	t.Helper()
	ctx := t.Context()
	st := f.env.Store
	must(t)(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-lead", Title: "Lead", Content: "Lead the desk."}))
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lead", RoleID: "r-lead", Title: "Lead"}))
	must(t)(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-desk", Title: "Desk", Content: "Work the desk."}))
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-desk", RoleID: "r-desk", Title: "Desk", ReportsTo: "p-lead"}))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "Lead"}, nil))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-desk", Kind: domain.WorkerAI, PositionID: "p-desk", Name: "Desk"}, nil))
}

// as returns an Env for another caller on the same store.
func (f fixture) as(caller string) *Env {
	return &Env{Store: f.env.Store, Caller: caller, Known: f.env.Known, Skills: f.env.Skills, SkillDefs: f.env.SkillDefs,
		Outside: f.env.Outside, OutsideTools: f.env.OutsideTools}
}

// grant gives a worker tools directly through the store.
func (f fixture) grant(t *testing.T, worker string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		must(t)(f.env.Store.GrantTool(t.Context(), store.OwnerWorker, domain.Grant{WorkerID: worker, Tool: tool}))
	}
}

// follow subscribes a worker to streams directly through the store, as the
// operator, so a test's reader follows what it reads.
func (f fixture) follow(t *testing.T, worker string, streams ...string) {
	t.Helper()
	for _, s := range streams {
		must(t)(f.env.Store.Subscribe(t.Context(), "", s, worker))
	}
}

// must fails the test on a setup error, for one-line fixture calls.
func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// call runs a tool's handler with args encoded as a client would send them,
// and decodes the output from the JSON a client would receive into Out.
func call[Out any](t *testing.T, env *Env, name string, args map[string]any) (Out, error) {
	t.Helper()
	var got Out
	tool, ok := toolNamed(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatalf("encode args: %v", err)
	}
	out, err := tool.call(t.Context(), env, raw)
	if err != nil {
		return got, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%s: encode output: %v", name, err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: decode output %s: %v", name, b, err)
	}
	return got, nil
}

// mustCall is call for steps that must succeed.
func mustCall[Out any](t *testing.T, env *Env, name string, args map[string]any) Out {
	t.Helper()
	out, err := call[Out](t, env, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return out
}

func toolNamed(name string) (Tool, bool) {
	for _, t := range append(All(), FindTools()) {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// toolCase is one row of a tool's table: optional setup on the fixture,
// the caller (w-owner when empty), the arguments, and either the output
// the client should see or the pieces its error must contain.
type toolCase[Out any] struct {
	name   string
	setup  func(t *testing.T, f fixture)
	caller string
	// activation, when set, is the agent run the call comes from.
	activation string
	args       map[string]any
	want       Out
	// wantErr lists substrings the error text must contain; when set the
	// call must fail and must leave the store unchanged.
	wantErr []string
	// wantIs, when set, is the sentinel the error must wrap.
	wantIs error
	// check makes further assertions after a successful call.
	check func(t *testing.T, f fixture, got Out)
}

// runTable runs each case on a fresh fixture.
func runTable[Out any](t *testing.T, tool string, cases []toolCase[Out], opts ...cmp.Option) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			env := f.env
			if tc.caller != "" {
				env = f.as(tc.caller)
			}
			if tc.activation != "" {
				withRun := *env
				withRun.ActivationID = tc.activation
				env = &withRun
			}
			before := lastSeq(t, f.env.Store)
			got, err := call[Out](t, env, tool, tc.args)
			if len(tc.wantErr) > 0 || tc.wantIs != nil {
				if err == nil {
					t.Fatalf("%s(%v) succeeded with %+v; want an error containing %q", tool, tc.args, got, tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("error %q is not %v", err, tc.wantIs)
				}
				if after := lastSeq(t, f.env.Store); after != before {
					t.Errorf("failed call changed the store: last seq %d → %d", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s(%v): %v", tool, tc.args, err)
			}
			if diff := cmp.Diff(tc.want, got, opts...); diff != "" {
				t.Errorf("%s output mismatch (-want +got):\n%s", tool, diff)
			}
			if tc.check != nil {
				tc.check(t, f, got)
			}
		})
	}
}

func lastSeq(t *testing.T, st *store.Store) int64 {
	t.Helper()
	seq, err := st.LastSeq(t.Context())
	if err != nil {
		t.Fatalf("last seq: %v", err)
	}
	return seq
}

// lastOrgChange decodes the newest change on s-org.
func lastOrgChange(t *testing.T, st *store.Store) store.Change {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	if err != nil || len(evs) == 0 {
		t.Fatalf("read s-org: %v (%d events)", err, len(evs))
	}
	var c store.Change
	if err := json.Unmarshal(evs[len(evs)-1].Message.Extra, &c); err != nil {
		t.Fatalf("decode change: %v", err)
	}
	return c
}

// TestEveryToolHasATable fails when a tool is registered without a
// <name>_test.go beside it, so new tools get a table as they are added.
func TestEveryToolHasATable(t *testing.T) {
	for _, name := range append(Names(), FindTools().Name) {
		if _, err := os.Stat(name + "_test.go"); err != nil {
			t.Errorf("tool %s has no %s_test.go: %v", name, name, err)
		}
	}
}

// TestEveryToolIsAnnotated: every tool has a title and states all four
// hints, and none contradicts itself.
func TestEveryToolIsAnnotated(t *testing.T) {
	for _, tool := range append(All(), FindTools()) {
		a := tool.Def(testTransports).Annotations
		switch {
		case tool.Title == "" || a == nil || a.Title != tool.Title:
			t.Errorf("%s has no title and annotations (define(…).annotated(title, hints))", tool.Name)
		case a.DestructiveHint == nil || a.OpenWorldHint == nil:
			t.Errorf("%s leaves destructiveHint or openWorldHint to the protocol's default", tool.Name)
		case a.ReadOnlyHint && (*a.DestructiveHint || !a.IdempotentHint):
			t.Errorf("%s is read-only yet destructive or not idempotent: %+v", tool.Name, *a)
		}
	}
}

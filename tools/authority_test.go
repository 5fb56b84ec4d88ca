package tools

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// orgState is everything an act on a worker could change, read back from
// the store, so a refusal is shown to leave the org exactly as it was.
type orgState struct {
	LastSeq   int64
	Workers   []domain.Worker
	Grants    map[string][]domain.Grant
	Positions []domain.Position
	Roles     []domain.Role
	Members   map[string][]string
}

func readOrg(t *testing.T, st *store.Store) orgState {
	t.Helper()
	ctx := t.Context()
	s := orgState{LastSeq: lastSeq(t, st), Grants: map[string][]domain.Grant{}, Members: map[string][]string{}}
	var err error
	if s.Workers, err = st.ListWorkers(ctx, store.WorkerFilter{IncludeDismissed: true}); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Workers {
		if s.Grants[w.ID], err = st.ListGrants(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	if s.Positions, err = st.ListPositions(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Roles, err = st.ListRoles(ctx); err != nil {
		t.Fatal(err)
	}
	streams, err := st.ListStreams(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range streams {
		subs, err := st.StreamMembers(ctx, stream.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range subs {
			s.Members[stream.ID] = append(s.Members[stream.ID], sub.WorkerID)
		}
	}
	return s
}

// seats of the chart the authority table runs over (withLead):
//
//	w-owner  p-owner   the root
//	w-lead   p-lead    reports to p-owner
//	w-desk   p-desk    reports to p-lead
//	w-maya   p-support reports to p-owner (beside p-lead), with w-echo
var chartSeats = map[string]struct{ position, role string }{
	"w-owner": {"p-owner", "r-owner"},
	"w-lead":  {"p-lead", "r-lead"},
	"w-desk":  {"p-desk", "r-desk"},
	"w-maya":  {"p-support", "r-support"},
	"w-echo":  {"p-support", "r-support"},
}

// TestAuthorityFollowsTheChart runs every act one worker does to another
// over every kind of pair: only down the chart (and anything by the owner)
// is allowed; a refusal names the rule, wraps ErrForbidden and leaves the
// store as it was.
func TestAuthorityFollowsTheChart(t *testing.T) {
	pairs := []struct {
		name          string
		actor, target string
		allowed       bool
		rule          string
	}{
		{"manager on its report", "w-lead", "w-desk", true, ""},
		{"owner on anyone", "w-owner", "w-desk", true, ""},
		{"report on its manager", "w-desk", "w-lead", false, "w-desk may only"},
		{"peer on peer in one position", "w-maya", "w-echo", false, "w-maya may only"},
		{"on a position beside yours", "w-lead", "w-maya", false, "w-lead may only"},
		{"anyone on the owner", "w-lead", "w-owner", false, "w-lead may only"},
	}
	acts := []struct {
		tool string
		args func(target string) map[string]any
		// rule is the part of a refusal that names the act's rule.
		rule string
	}{
		{"dismiss_worker", func(w string) map[string]any { return map[string]any{"id": w} }, "manage workers below"},
		{"grant_tool", func(w string) map[string]any { return map[string]any{"worker": w, "tool": "publish"} }, "manage workers below"},
		{"revoke_tool", func(w string) map[string]any { return map[string]any{"worker": w, "tool": "read_events"} }, "manage workers below"},
		{"update_identity", func(w string) map[string]any { return map[string]any{"id": w, "identity": "Rewritten."} }, "manage workers below"},
		{"subscribe", func(w string) map[string]any { return map[string]any{"stream": "s-news", "worker": w} }, "manage workers below"},
		{"unsubscribe", func(w string) map[string]any { return map[string]any{"stream": "s-inbox", "worker": w} }, "manage workers below"},
		{"invite_workers", func(w string) map[string]any { return map[string]any{"stream": "s-news", "workers": []string{w}} }, "manage workers below"},
		{"hire_worker", func(w string) map[string]any {
			return map[string]any{"position": chartSeats[w].position, "kind": "human", "name": "New Hire"}
		}, "hire into and create positions below"},
		{"update_role", func(w string) map[string]any {
			return map[string]any{"id": chartSeats[w].role, "content": "Rewritten."}
		}, "edit roles whose every position is below"},
	}
	setup := func(t *testing.T, f fixture) {
		withLead(t, f)
		must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-news", Name: "news", Transport: domain.Transport{Kind: domain.TransportLocal}}))
		for w := range chartSeats {
			f.follow(t, w, "s-inbox")
			if w != store.OwnerWorker {
				f.grant(t, w, "publish", "read_events")
			}
		}
	}
	for _, act := range acts {
		for _, p := range pairs {
			t.Run(act.tool+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				setup(t, f)
				before := readOrg(t, f.env.Store)
				_, err := call[any](t, f.as(p.actor), act.tool, act.args(p.target))
				if p.allowed {
					if err != nil {
						t.Fatalf("%s by %s on %s: %v", act.tool, p.actor, p.target, err)
					}
					if readOrg(t, f.env.Store).LastSeq == before.LastSeq {
						t.Errorf("%s by %s on %s succeeded but changed nothing", act.tool, p.actor, p.target)
					}
					return
				}
				if err == nil {
					t.Fatalf("%s by %s on %s was allowed", act.tool, p.actor, p.target)
				}
				if !errors.Is(err, domain.ErrForbidden) {
					t.Errorf("error %q does not wrap ErrForbidden", err)
				}
				for _, w := range []string{p.rule, act.rule} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name the rule (%q)", err, w)
					}
				}
				if diff := cmp.Diff(before, readOrg(t, f.env.Store)); diff != "" {
					t.Errorf("refused %s changed the store (-before +after):\n%s", act.tool, diff)
				}
			})
		}
	}
}

// TestCreatePositionFollowsTheChart: a new position lands strictly below
// its creator: reporting to the creator's own position (the default) or
// one below it; the owner places anywhere.
func TestCreatePositionFollowsTheChart(t *testing.T) {
	cases := []struct {
		name, caller, reportsTo string
		wantReportsTo           string
		wantErr                 string
	}{
		{"defaults to the creator's own position", "w-lead", "", "p-lead", ""},
		{"below the creator's report", "w-lead", "p-desk", "p-desk", ""},
		{"the owner's default is the root", store.OwnerWorker, "", "", ""},
		{"the owner places anywhere", store.OwnerWorker, "p-desk", "p-desk", ""},
		{"not beside the creator", "w-lead", "p-support", "", "w-lead may only hire into and create positions below p-lead; p-new is not"},
		{"not at the root", "w-lead", "p-owner", "", "below p-lead; p-new is not"},
		{"not above the creator", "w-desk", "p-lead", "", "w-desk may only hire into and create positions below p-desk; p-new is not"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			withLead(t, f)
			before := readOrg(t, f.env.Store)
			args := map[string]any{"id": "p-new", "role": "r-support", "title": "New"}
			if tc.reportsTo != "" {
				args["reportsTo"] = tc.reportsTo
			}
			got, err := call[domain.Position](t, f.as(tc.caller), "create_position", args)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want ErrForbidden naming %q", err, tc.wantErr)
				}
				if diff := cmp.Diff(before, readOrg(t, f.env.Store)); diff != "" {
					t.Errorf("refused create_position changed the store (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ReportsTo != tc.wantReportsTo {
				t.Errorf("reportsTo = %q, want %q", got.ReportsTo, tc.wantReportsTo)
			}
		})
	}
}

// TestActingOnYourself: the harmless self-service cases are allowed;
// granting to or dismissing yourself is not, for the owner either.
func TestActingOnYourself(t *testing.T) {
	cases := []struct {
		caller, tool string
		args         map[string]any
		wantErr      string
	}{
		{"w-desk", "update_identity", map[string]any{"identity": "Still me."}, ""},
		{"w-desk", "subscribe", map[string]any{"stream": "s-inbox"}, ""},
		{"w-maya", "unsubscribe", map[string]any{"stream": "s-news"}, ""},
		{"w-desk", "revoke_tool", map[string]any{"worker": "w-desk", "tool": "publish"}, ""},
		{"w-desk", "grant_tool", map[string]any{"worker": "w-desk", "tool": "publish", "expiresIn": "1h"}, "w-desk cannot grant to itself"},
		{store.OwnerWorker, "grant_tool", map[string]any{"worker": store.OwnerWorker, "tool": "publish", "expiresIn": "1s"}, "w-owner cannot grant to itself"},
		{"w-desk", "dismiss_worker", map[string]any{"id": "w-desk"}, "you cannot dismiss yourself"},
		{"w-desk", "update_role", map[string]any{"id": "r-desk", "content": "I decide now."}, "w-desk may only edit roles whose every position is below p-desk; r-desk is held by p-desk"},
	}
	for _, tc := range cases {
		t.Run(tc.caller+"/"+tc.tool, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			withLead(t, f)
			must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-news", Name: "news", Transport: domain.Transport{Kind: domain.TransportLocal}}))
			f.follow(t, "w-maya", "s-news")
			f.grant(t, "w-desk", "publish")
			before := readOrg(t, f.env.Store)
			_, err := call[any](t, f.as(tc.caller), tc.tool, tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(before, readOrg(t, f.env.Store)); diff != "" {
				t.Errorf("refused %s changed the store (-before +after):\n%s", tc.tool, diff)
			}
		})
	}
}

// TestUpdateRoleNobodyHolds: a role no position holds is edited by its
// creator or the owner, no one else.
func TestUpdateRoleNobodyHolds(t *testing.T) {
	f := newFixture(t)
	withLead(t, f)
	f.grant(t, "w-lead", "create_role")
	mustCall[any](t, f.as("w-lead"), "create_role", map[string]any{"id": "r-draft", "title": "Draft", "content": "v1"})
	mustCall[any](t, f.as("w-lead"), "update_role", map[string]any{"id": "r-draft", "content": "v2"})
	mustCall[any](t, f.env, "update_role", map[string]any{"id": "r-draft", "content": "v3"})
	_, err := call[any](t, f.as("w-desk"), "update_role", map[string]any{"id": "r-draft", "content": "mine"})
	if err == nil || !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), "r-draft is held by no position; only its creator or w-owner may edit it") {
		t.Errorf("w-desk editing r-draft: %v", err)
	}
	if r, _ := f.env.Store.GetRole(t.Context(), "r-draft"); r.Content != "v3" {
		t.Errorf("r-draft = %q, want v3", r.Content)
	}
}

// TestGrantsNeverGrow: a worker granted for 5 s cannot make anything it
// passes on outlive those 5 s, cannot extend itself, and cannot touch the
// owner's grants. The store's clock moves; nothing sleeps.
func TestGrantsNeverGrow(t *testing.T) {
	f := newFixture(t)
	withLead(t, f)
	for _, tool := range []string{"grant_tool", "publish", "hire_worker"} {
		mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": tool, "expiresIn": "5s"})
	}
	lead := f.as("w-lead")
	end := t0.Add(5 * time.Second)
	attempts := []map[string]any{
		{"worker": "w-desk", "tool": "publish"},
		{"worker": "w-desk", "tool": "publish", "expiresIn": "24h"},
		{"worker": "w-desk", "tool": "grant_tool", "expiresAt": "2030-01-01T00:00:00Z"},
	}
	for _, a := range attempts {
		g := mustCall[domain.Grant](t, lead, "grant_tool", a)
		if g.ExpiresAt == nil || !g.ExpiresAt.Equal(end) {
			t.Errorf("grant_tool(%v) → expires %v, want %v (the granter's own end)", a, g.ExpiresAt, end)
		}
	}
	must(t)(f.env.Store.CreatePosition(t.Context(), store.OwnerWorker, domain.Position{ID: "p-sub", RoleID: "r-desk", Title: "Sub", ReportsTo: "p-desk"}))
	hired := mustCall[domain.Worker](t, lead, "hire_worker", map[string]any{"position": "p-sub", "kind": "ai", "name": "Temp", "grants": []string{"publish"}})
	for _, refused := range []map[string]any{
		{"worker": "w-lead", "tool": "publish"},
		{"worker": "w-owner", "tool": "publish", "expiresIn": "1s"},
	} {
		if _, err := call[any](t, lead, "grant_tool", refused); !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("grant_tool(%v) by w-lead: %v, want forbidden", refused, err)
		}
	}
	// A grant w-desk got from w-lead passes on no further in time either.
	f.clock.Advance(2 * time.Second)
	g := mustCall[domain.Grant](t, f.as("w-desk"), "grant_tool", map[string]any{"worker": hired.ID, "tool": "publish", "expiresIn": "1h"})
	if !g.ExpiresAt.Equal(end) {
		t.Errorf("w-desk's grant to %s expires %v, want %v", hired.ID, g.ExpiresAt, end)
	}

	f.clock.Advance(3 * time.Second)
	for _, w := range []string{"w-lead", "w-desk", hired.ID} {
		if live, err := f.env.Store.LiveTools(t.Context(), w); err != nil || len(live) > 0 {
			t.Errorf("%s still holds %v (%v) after the 5 s ran out", w, live, err)
		}
	}
	owner, err := f.env.Store.ListGrants(t.Context(), store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range owner {
		if g.ExpiresAt != nil || g.GrantedBy != "" {
			t.Errorf("owner's grant %+v changed; want no expiry, given by the operator", g)
		}
	}
}

package tools

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestHireWorker(t *testing.T) {
	runTable(t, "hire_worker", []toolCase[domain.Worker]{
		{
			name: "id derived from the name",
			args: map[string]any{"position": "p-support", "kind": "human", "name": "Sam Jones", "identity": "Night shift."},
			want: domain.Worker{ID: "w-sam-jones", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Sam Jones", Identity: "Night shift.", HiredBy: "w-owner", HiredAt: t0},
		},
		{
			name: "derived id taken gets a numeric suffix",
			args: map[string]any{"position": "p-support", "kind": "human", "name": "Maya"},
			want: domain.Worker{ID: "w-maya-2", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Maya", HiredBy: "w-owner", HiredAt: t0},
		},
		{
			name: "ai hire gets an activation log the hirer follows, and its grants",
			args: map[string]any{"id": "w-bot", "position": "p-support", "kind": "ai", "name": "Bot", "grants": []string{"read_events", "publish", "publish"}},
			want: domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-support", Name: "Bot", HiredBy: "w-owner", HiredAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				tools, err := f.env.Store.LiveTools(t.Context(), "w-bot")
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"publish", "read_events"}, tools); diff != "" {
					t.Errorf("w-bot's tools (-want +got):\n%s", diff)
				}
				members, err := f.env.Store.StreamMembers(t.Context(), "s-activations-w-bot")
				if err != nil {
					t.Fatalf("activation stream: %v", err)
				}
				if len(members) != 1 || members[0].WorkerID != "w-owner" {
					t.Errorf("s-activations-w-bot members = %+v, want w-owner", members)
				}
			},
		},
		{
			name: "a hire takes over the streams the position's last dismissed worker followed, not its DMs",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), "w-owner", domain.Stream{ID: "s-billing", Name: "billing", Transport: domain.Transport{Kind: domain.TransportLocal}}))
				f.follow(t, "w-maya", "s-billing")
				f.follow(t, "w-echo", "s-inbox")
				mustCall[any](t, f.env, "dm", map[string]any{"to": "w-echo", "body": "hi"})
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
				f.clock.Advance(time.Minute)
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-echo"})
			},
			args: map[string]any{"id": "w-bot", "position": "p-support", "kind": "ai", "name": "Bot"},
			want: domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-support", Name: "Bot", HiredBy: "w-owner", HiredAt: t0.Add(time.Minute)},
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				assertMembers(t, f, "s-inbox", "w-bot", "w-echo")
				assertMembers(t, f, "s-billing", "w-maya")
				assertMembers(t, f, domain.DMStreamID("w-echo", "w-owner"), "w-echo", "w-owner")
			},
		},
		{
			name:   "a worker may hire below it and grant tools it holds",
			setup:  func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "hire_worker", "publish") },
			caller: "w-lead",
			args:   map[string]any{"id": "w-temp", "position": "p-desk", "kind": "human", "name": "Temp", "grants": []string{"publish"}},
			want:   domain.Worker{ID: "w-temp", Kind: domain.WorkerHuman, PositionID: "p-desk", Name: "Temp", HiredBy: "w-lead", HiredAt: t0},
		},
		{
			name: "grants given at hire end no later than the hirer's own",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				f.grant(t, "w-lead", "hire_worker")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": "publish", "expiresIn": "5s"})
			},
			caller: "w-lead",
			args:   map[string]any{"id": "w-temp", "position": "p-desk", "kind": "human", "name": "Temp", "grants": []string{"publish"}},
			want:   domain.Worker{ID: "w-temp", Kind: domain.WorkerHuman, PositionID: "p-desk", Name: "Temp", HiredBy: "w-lead", HiredAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				gs, err := f.env.Store.ListGrants(t.Context(), "w-temp")
				if err != nil {
					t.Fatal(err)
				}
				if len(gs) != 1 || gs[0].ExpiresAt == nil || !gs[0].ExpiresAt.Equal(t0.Add(5*time.Second)) {
					t.Errorf("w-temp's grants = %+v, want publish until %v", gs, t0.Add(5*time.Second))
				}
			},
		},
		{
			name: "a tool the hirer may use only with approval is handed on waiting for approval too",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				f.grant(t, "w-lead", "hire_worker")
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-lead", "tool": "publish", "approval": "required"})
			},
			caller: "w-lead",
			args:   map[string]any{"id": "w-temp", "position": "p-desk", "kind": "ai", "name": "Temp", "grants": []string{"publish", "hire_worker"}},
			want:   domain.Worker{ID: "w-temp", Kind: domain.WorkerAI, PositionID: "p-desk", Name: "Temp", HiredBy: "w-lead", HiredAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				gs, err := f.env.Store.ListGrants(t.Context(), "w-temp")
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]domain.GrantApproval{}
				for _, g := range gs {
					got[g.Tool] = g.Approval
				}
				if diff := cmp.Diff(map[string]domain.GrantApproval{"publish": domain.ApprovalRequired, "hire_worker": ""}, got); diff != "" {
					t.Errorf("w-temp's grants' approval (-want +got):\n%s", diff)
				}
				if held, err := f.env.Store.ApprovalRequired(t.Context(), "w-temp", "publish"); err != nil || !held {
					t.Errorf("w-temp's publish waits for approval: %v, %v; want true", held, err)
				}
			},
		},
		{
			name:    "cannot hire into your own position",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "hire_worker") },
			caller:  "w-lead",
			args:    map[string]any{"position": "p-lead", "kind": "human", "name": "Twin"},
			wantErr: []string{"w-lead may only hire into and create positions below p-lead; p-lead is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "cannot hire beside you",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "hire_worker") },
			caller:  "w-lead",
			args:    map[string]any{"position": "p-support", "kind": "human", "name": "Mole"},
			wantErr: []string{"below p-lead; p-support is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "nobody is hired into the owner's seat",
			args:    map[string]any{"position": "p-owner", "kind": "human", "name": "Co-owner"},
			wantErr: []string{"p-owner is the owner's seat; only w-owner holds it"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "caller-chosen id already taken",
			args:    map[string]any{"id": "w-maya", "position": "p-support", "kind": "human", "name": "Maya"},
			wantErr: []string{`worker "w-maya" already exists`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "unknown kind lists the valid kinds",
			args:    map[string]any{"position": "p-support", "kind": "robot", "name": "R2"},
			wantErr: []string{`kind: unknown worker kind "robot" (valid: "human", "ai")`},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "missing kind",
			args:    map[string]any{"position": "p-support", "name": "R2"},
			wantErr: []string{`kind: unknown worker kind "" (valid: "human", "ai")`},
		},
		{
			name:    "missing position",
			args:    map[string]any{"kind": "human", "name": "Sam"},
			wantErr: []string{"position: is required"},
		},
		{
			name:    "missing name",
			args:    map[string]any{"position": "p-support", "kind": "human"},
			wantErr: []string{"name: is required"},
		},
		{
			name:    "unknown position",
			args:    map[string]any{"position": "p-nope", "kind": "human", "name": "Sam"},
			wantErr: []string{`position "p-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "unknown tool in grants lists the valid tools",
			args:    map[string]any{"position": "p-support", "kind": "ai", "name": "Bot", "grants": []string{"fly"}},
			wantErr: []string{`grants: unknown tool "fly" (valid: create_role, update_role`},
		},
		{
			name:    "cannot grant a tool the hirer does not hold",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "hire_worker") },
			caller:  "w-lead",
			args:    map[string]any{"position": "p-desk", "kind": "ai", "name": "Bot", "grants": []string{"publish"}},
			wantErr: []string{`grants: you cannot grant "publish" because you do not hold it`},
		},
	})
}

package tools

import (
	"testing"

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
			name:   "a worker may grant tools it holds",
			setup:  func(t *testing.T, f fixture) { f.grant(t, "w-maya", "hire_worker", "publish") },
			caller: "w-maya",
			args:   map[string]any{"id": "w-temp", "position": "p-support", "kind": "human", "name": "Temp", "grants": []string{"publish"}},
			want:   domain.Worker{ID: "w-temp", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Temp", HiredBy: "w-maya", HiredAt: t0},
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
			setup:   func(t *testing.T, f fixture) { f.grant(t, "w-maya", "hire_worker") },
			caller:  "w-maya",
			args:    map[string]any{"position": "p-support", "kind": "ai", "name": "Bot", "grants": []string{"publish"}},
			wantErr: []string{`grants: you cannot grant "publish" because you do not hold it`},
		},
	})
}

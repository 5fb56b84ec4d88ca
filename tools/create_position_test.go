package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestCreatePosition(t *testing.T) {
	runTable(t, "create_position", []toolCase[domain.Position]{
		{
			name: "id derived from the title",
			args: map[string]any{"role": "r-support", "title": "Night Desk"},
			want: domain.Position{ID: "p-night-desk", RoleID: "r-support", Title: "Night Desk", CreatedAt: t0},
		},
		{
			name: "derived id taken gets a numeric suffix",
			args: map[string]any{"role": "r-support", "title": "Support"},
			want: domain.Position{ID: "p-support-2", RoleID: "r-support", Title: "Support", CreatedAt: t0},
		},
		{
			name: "caller-chosen id reporting to another position",
			args: map[string]any{"id": "p-lead", "role": "r-support", "title": "Support Lead", "reportsTo": "p-support"},
			want: domain.Position{ID: "p-lead", RoleID: "r-support", Title: "Support Lead", ReportsTo: "p-support", CreatedAt: t0},
		},
		{
			name:    "caller-chosen id already taken",
			args:    map[string]any{"id": "p-support", "role": "r-support", "title": "Again"},
			wantErr: []string{`position "p-support" already exists`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing role",
			args:    map[string]any{"title": "Floating"},
			wantErr: []string{"role: is required"},
		},
		{
			name:    "missing title",
			args:    map[string]any{"role": "r-support"},
			wantErr: []string{"title: is required"},
		},
		{
			name:    "unknown role",
			args:    map[string]any{"role": "r-nope", "title": "Ghost"},
			wantErr: []string{`role "r-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "reports to an unknown position",
			args:    map[string]any{"role": "r-support", "title": "Orphan", "reportsTo": "p-nope"},
			wantErr: []string{`position "p-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "reports to itself",
			args:    map[string]any{"id": "p-loop", "role": "r-support", "title": "Loop", "reportsTo": "p-loop"},
			wantErr: []string{"reportsTo: a position cannot report to itself"},
		},
		{
			name:    "id with the wrong prefix",
			args:    map[string]any{"id": "r-support-2", "role": "r-support", "title": "Wrong"},
			wantErr: []string{"id: ", `must start with "p-"`},
		},
	})
}

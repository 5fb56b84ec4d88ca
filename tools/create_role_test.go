package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestCreateRole(t *testing.T) {
	runTable(t, "create_role", []toolCase[domain.Role]{
		{
			name: "id derived from the title",
			args: map[string]any{"title": "Support Engineer", "content": "# Support\nAnswer."},
			want: domain.Role{ID: "r-support-engineer", Title: "Support Engineer", Content: "# Support\nAnswer.", CreatedAt: t0, UpdatedAt: t0},
			check: func(t *testing.T, f fixture, got domain.Role) {
				c := lastOrgChange(t, f.env.Store)
				if c.Action != "create_role" || c.Actor != "w-owner" || c.Target != "r-support-engineer" {
					t.Errorf("s-org change = %+v, want create_role of r-support-engineer by w-owner", c)
				}
			},
		},
		{
			name: "derived id taken gets a numeric suffix",
			args: map[string]any{"title": "Support", "content": "Second support role."},
			want: domain.Role{ID: "r-support-2", Title: "Support", Content: "Second support role.", CreatedAt: t0, UpdatedAt: t0},
		},
		{
			name: "caller-chosen id",
			args: map[string]any{"id": "r-help", "title": "Helpdesk"},
			want: domain.Role{ID: "r-help", Title: "Helpdesk", CreatedAt: t0, UpdatedAt: t0},
		},
		{
			name:    "caller-chosen id already taken",
			args:    map[string]any{"id": "r-support", "title": "Support"},
			wantErr: []string{`role "r-support" already exists`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing title",
			args:    map[string]any{"content": "x"},
			wantErr: []string{"title: is required"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "blank title",
			args:    map[string]any{"title": "   "},
			wantErr: []string{"title: is required"},
		},
		{
			name:    "id without the role prefix",
			args:    map[string]any{"id": "support", "title": "Support"},
			wantErr: []string{"id: ", `must start with "r-"`},
		},
		{
			name:    "id with capitals and underscores",
			args:    map[string]any{"id": "r-Bad_Id", "title": "Bad"},
			wantErr: []string{"id: ", "lowercase letters, digits and single hyphens"},
		},
		{
			name:    "content over the limit",
			args:    map[string]any{"title": "Huge", "content": strings.Repeat("x", domain.MaxRoleContent+1)},
			wantErr: []string{"content: is 262145 bytes; the limit is 262144"},
		},
	})
}

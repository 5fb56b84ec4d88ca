package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestGetRole(t *testing.T) {
	runTable(t, "get_role", []toolCase[domain.Role]{
		{
			name: "found",
			args: map[string]any{"id": "r-support"},
			want: domain.Role{ID: "r-support", Title: "Support", Content: "Answer tickets.", CreatedAt: t0, UpdatedAt: t0},
		},
		{
			name: "shows the current content after an update",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "update_role", map[string]any{"id": "r-support", "content": "v2"})
			},
			args: map[string]any{"id": "r-support"},
			want: domain.Role{ID: "r-support", Title: "Support", Content: "v2", CreatedAt: t0, UpdatedAt: t0},
		},
		{
			name:    "missing id",
			wantErr: []string{"id: is required"},
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "r-nope"},
			wantErr: []string{`role "r-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

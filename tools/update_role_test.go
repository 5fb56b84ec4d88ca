package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestUpdateRole(t *testing.T) {
	later := t0.Add(time.Hour)
	advance := func(t *testing.T, f fixture) { f.clock.Advance(time.Hour) }
	runTable(t, "update_role", []toolCase[domain.Role]{
		{
			name:  "content only keeps the title and moves updatedAt",
			setup: advance,
			args:  map[string]any{"id": "r-support", "content": "Answer tickets politely."},
			want:  domain.Role{ID: "r-support", Title: "Support", Content: "Answer tickets politely.", CreatedAt: t0, UpdatedAt: later},
			check: func(t *testing.T, f fixture, _ domain.Role) {
				c := lastOrgChange(t, f.env.Store)
				before, _ := c.Before.(map[string]any)
				after, _ := c.After.(map[string]any)
				if c.Action != "update_role" || c.Actor != store.OwnerWorker || before["content"] != "Answer tickets." || after["content"] != "Answer tickets politely." {
					t.Errorf("s-org change = %+v, want update_role by w-owner with old and new content", c)
				}
			},
		},
		{
			name:  "title only keeps the content",
			setup: advance,
			args:  map[string]any{"id": "r-support", "title": "Customer Support"},
			want:  domain.Role{ID: "r-support", Title: "Customer Support", Content: "Answer tickets.", CreatedAt: t0, UpdatedAt: later},
		},
		{
			name: "content may be emptied",
			args: map[string]any{"id": "r-support", "content": ""},
			want: domain.Role{ID: "r-support", Title: "Support", CreatedAt: t0, UpdatedAt: t0},
		},
		{
			name:    "missing id",
			args:    map[string]any{"content": "x"},
			wantErr: []string{"id: is required"},
		},
		{
			name:    "nothing to change",
			args:    map[string]any{"id": "r-support"},
			wantErr: []string{"content: give title, content or both to change"},
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "r-nope", "content": "x"},
			wantErr: []string{`role "r-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "blank title",
			args:    map[string]any{"id": "r-support", "title": " "},
			wantErr: []string{"title: is required"},
		},
	})
}

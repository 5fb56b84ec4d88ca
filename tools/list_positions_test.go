package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestListPositions(t *testing.T) {
	type out struct {
		Positions []domain.Position `json:"positions"`
	}
	owner := domain.Position{ID: "p-owner", RoleID: "r-owner", Title: "Owner", CreatedAt: t0}
	support := domain.Position{ID: "p-support", RoleID: "r-support", Title: "Support 1", CreatedAt: t0}
	runTable(t, "list_positions", []toolCase[out]{
		{
			name: "every position by id",
			want: out{Positions: []domain.Position{owner, support}},
		},
		{
			name: "only one role's positions",
			args: map[string]any{"role": "r-support"},
			want: out{Positions: []domain.Position{support}},
		},
		{
			name: "a role with no positions gives an empty list",
			args: map[string]any{"role": "r-nope"},
			want: out{Positions: []domain.Position{}},
		},
	})
}

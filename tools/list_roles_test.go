package tools

import (
	"testing"
)

type roleSummary struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func TestListRoles(t *testing.T) {
	type out struct {
		Roles []roleSummary `json:"roles"`
	}
	runTable(t, "list_roles", []toolCase[out]{
		{
			name: "every role by id",
			want: out{Roles: []roleSummary{{"r-owner", "Owner"}, {"r-support", "Support"}}},
		},
		{
			name: "a new role is listed",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "create_role", map[string]any{"title": "Analyst"})
			},
			want: out{Roles: []roleSummary{{"r-analyst", "Analyst"}, {"r-owner", "Owner"}, {"r-support", "Support"}}},
		},
	})
}

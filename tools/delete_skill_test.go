package tools

import (
	"slices"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestDeleteSkill(t *testing.T) {
	type out struct {
		Name    string `json:"name"`
		Deleted bool   `json:"deleted"`
	}
	runTable(t, "delete_skill", []toolCase[out]{
		{
			name: "the skill and its grants are gone",
			setup: func(t *testing.T, f fixture) {
				withSkills(f)
				mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": "echo"})
				learnSkills(t, f)
				mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-echo", "tool": "skill_csv_sum"})
			},
			args: map[string]any{"name": "csv_sum"},
			want: out{Name: "csv_sum", Deleted: true},
			check: func(t *testing.T, f fixture, _ out) {
				if _, err := f.env.Store.GetSkill(t.Context(), "csv_sum"); err == nil {
					t.Error("skill still recorded")
				}
				if tools, _ := f.env.Store.LiveTools(t.Context(), "w-echo"); slices.Contains(tools, "skill_csv_sum") {
					t.Error("grant of the deleted skill's tool survived")
				}
			},
		},
		{
			name:    "unknown skill",
			setup:   func(t *testing.T, f fixture) { withSkills(f) },
			args:    map[string]any{"name": "nope"},
			wantErr: []string{`skill "nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

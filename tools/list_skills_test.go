package tools

import (
	"testing"
)

func TestListSkills(t *testing.T) {
	type out struct {
		Skills []skillSummary `json:"skills"`
	}
	runTable(t, "list_skills", []toolCase[out]{
		{
			name: "none yet",
			want: out{Skills: []skillSummary{}},
		},
		{
			name: "every skill by name, with its tool",
			setup: func(t *testing.T, f fixture) {
				withSkills(f)
				for _, name := range []string{"zip_files", "csv_sum"} {
					mustCall[any](t, f.env, "create_skill", map[string]any{"name": name, "description": "d", "template": "shell", "handler": "echo"})
				}
			},
			want: out{Skills: []skillSummary{
				{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
				{Name: "zip_files", Version: 1, Status: "ready", Tool: "skill_zip_files", CreatedBy: "w-owner"},
			}},
		},
	})
}

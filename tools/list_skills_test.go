package tools

import (
	"errors"
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
			name: "versions: ok, failed, live",
			setup: func(t *testing.T, f fixture) {
				fs := withSkills(f)
				mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": "echo"})
				fs.createErr = errors.New("example 1 of 1 failed: input {}\nexpected: 1\ngot: 2")
				call[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": "echo"})
			},
			check: func(t *testing.T, f fixture, got out) {
				full := mustCall[listSkillsOut](t, f.env, "list_skills", nil)
				vs := full.Skills[0].Versions
				if len(vs) != 2 || vs[0].Status != "ok" || !vs[0].Live || vs[1].Status != "failed" || vs[1].Live || vs[1].Error != "example 1 of 1 failed: input {}" {
					t.Errorf("versions = %+v", vs)
				}
			},
			want: out{Skills: []skillSummary{{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"}}},
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

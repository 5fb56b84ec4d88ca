package tools

import (
	"errors"
	"slices"
	"testing"
)

type skillSummary struct {
	Name      string `json:"name"`
	Version   int    `json:"version"`
	Status    string `json:"status"`
	Tool      string `json:"tool"`
	CreatedBy string `json:"createdBy"`
}

func TestCreateSkill(t *testing.T) {
	args := map[string]any{"name": "csv_sum", "description": "Sum CSV columns", "template": "shell", "handler": "echo"}
	runTable(t, "create_skill", []toolCase[skillSummary]{
		{
			name:  "a new skill is version 1, served as skill_<name>",
			setup: func(t *testing.T, f fixture) { withSkills(f) },
			args:  args,
			want:  skillSummary{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
			check: func(t *testing.T, f fixture, _ skillSummary) {
				// The creator (here the owner) holds the new tool and may grant it on.
				if c := lastOrgChange(t, f.env.Store); c.Action != "grant_tool" || c.Target != "w-owner" {
					t.Errorf("audit = %+v", c)
				}
				if tools, _ := f.env.Store.LiveTools(t.Context(), "w-owner"); !slices.Contains(tools, "skill_csv_sum") {
					t.Errorf("the creator does not hold skill_csv_sum: %v", tools)
				}
			},
		},
		{
			name: "creating it again is the next version",
			setup: func(t *testing.T, f fixture) {
				withSkills(f)
				mustCall[any](t, f.env, "create_skill", args)
			},
			args: args,
			want: skillSummary{Name: "csv_sum", Version: 2, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
		},
		{
			name: "a build failure comes back as the error",
			setup: func(t *testing.T, f fixture) {
				withSkills(f).createErr = errors.New("image build failed: sh: syntax error")
			},
			args:    args,
			wantErr: []string{"image build failed: sh: syntax error"},
		},
		{
			name:    "no Docker",
			args:    args,
			wantErr: []string{"skills are not available on this server"},
		},
	})
}

package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestRollbackSkill(t *testing.T) {
	create := func(t *testing.T, f fixture, descs ...string) {
		for _, d := range descs {
			mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": d, "template": "shell", "handler": "echo"})
		}
	}
	runTable(t, "rollback_skill", []toolCase[skillSummary]{
		{
			name:  "the previous version serves again",
			setup: func(t *testing.T, f fixture) { withSkills(f); create(t, f, "v1", "v2") },
			args:  map[string]any{"name": "csv_sum"},
			want:  skillSummary{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
			check: func(t *testing.T, f fixture, _ skillSummary) {
				if c := lastOrgChange(t, f.env.Store); c.Action != "rollback_skill" || c.Target != "csv_sum" {
					t.Errorf("audit = %+v", c)
				}
				vs, _ := f.env.Store.SkillVersions(t.Context(), "csv_sum")
				if len(vs) != 2 || vs[1].Status != domain.VersionRolledBack {
					t.Errorf("versions = %+v; want v2 rolled back", vs)
				}
			},
		},
		{
			name:    "nothing earlier",
			setup:   func(t *testing.T, f fixture) { withSkills(f); create(t, f, "v1") },
			args:    map[string]any{"name": "csv_sum"},
			wantErr: []string{"no working version before version 1"},
			wantIs:  domain.ErrInvalid,
		},
		{name: "missing name", setup: func(t *testing.T, f fixture) { withSkills(f) }, args: map[string]any{}, wantErr: []string{"name: is required"}},
		{name: "no Docker", args: map[string]any{"name": "csv_sum"}, wantErr: []string{"skills are not available on this server"}},
	})
}

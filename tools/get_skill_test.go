package tools

import (
	"errors"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestGetSkill(t *testing.T) {
	type source struct {
		Version  int               `json:"version"`
		Status   string            `json:"status"`
		Error    string            `json:"error"`
		Files    map[string]string `json:"files"`
		BuildLog string            `json:"buildLog"`
	}
	type out struct {
		Skill  skillSummary `json:"skill"`
		Source source       `json:"source"`
	}
	twoVersions := func(t *testing.T, f fixture) {
		withSkills(f)
		for _, h := range []string{"echo one", "echo two"} {
			mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": h})
		}
	}
	const log = "Step 1/1 : FROM skill-base"
	summary := skillSummary{Name: "csv_sum", Version: 2, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"}
	runTable(t, "get_skill", []toolCase[out]{
		{
			name:  "the serving version's source and build log",
			setup: twoVersions,
			args:  map[string]any{"name": "csv_sum"},
			want:  out{Skill: summary, Source: source{Version: 2, Status: "ok", Files: map[string]string{"handler.sh": "echo two"}, BuildLog: log}},
		},
		{
			name:  "an earlier version by number",
			setup: twoVersions,
			args:  map[string]any{"name": "csv_sum", "version": 1},
			want:  out{Skill: summary, Source: source{Version: 1, Status: "ok", Files: map[string]string{"handler.sh": "echo one"}, BuildLog: log}},
		},
		{
			name: "a failed version shows why",
			setup: func(t *testing.T, f fixture) {
				withSkills(f).createErr = errors.New("image build failed: sh: syntax error")
				call[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": "for"})
				f.env.Store.SaveSkill(t.Context(), "w-owner", domain.Skill{Name: "csv_sum", Description: "d", Version: 1, Status: domain.SkillFailed, CreatedBy: "w-owner"})
			},
			args: map[string]any{"name": "csv_sum"},
			want: out{Skill: skillSummary{Name: "csv_sum", Version: 1, Status: "failed", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
				Source: source{Version: 1, Status: "failed", Error: "image build failed: sh: syntax error", Files: map[string]string{"handler.sh": "for"}, BuildLog: log}},
		},
		{name: "unknown skill", args: map[string]any{"name": "nope"}, wantErr: []string{`skill "nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "unknown version", setup: twoVersions, args: map[string]any{"name": "csv_sum", "version": 7},
			wantErr: []string{`skill version "csv_sum v7": not found`}, wantIs: domain.ErrNotFound},
		{name: "missing name", args: map[string]any{}, wantErr: []string{"name: is required"}},
		{name: "negative version", setup: twoVersions, args: map[string]any{"name": "csv_sum", "version": -1}, wantErr: []string{"version: must be a positive version number"}},
	})
}

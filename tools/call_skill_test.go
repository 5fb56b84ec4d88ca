package tools

import (
	"encoding/json"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestCallSkill(t *testing.T) {
	type out struct {
		Output json.RawMessage `json:"output"`
	}
	create := func(t *testing.T, f fixture) {
		withSkills(f)
		mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "d", "template": "shell", "handler": "echo",
			"inputSchema": json.RawMessage(csvSchema)})
	}
	runTable(t, "call_skill", []toolCase[out]{
		{
			name:  "the skill's output",
			setup: create,
			args:  map[string]any{"name": "csv_sum", "input": map[string]any{"csv": "a\n1"}},
			want:  out{Output: json.RawMessage(`{"echo":{"csv":"a\n1"}}`)},
		},
		{
			name:    "input checked against the skill's schema",
			setup:   create,
			args:    map[string]any{"name": "csv_sum", "input": map[string]any{"rows": 1}},
			wantErr: []string{"input: does not match skill csv_sum's input schema"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "unknown skill",
			setup:   func(t *testing.T, f fixture) { withSkills(f) },
			args:    map[string]any{"name": "nope"},
			wantErr: []string{`skill "nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "missing name",
			setup:   func(t *testing.T, f fixture) { withSkills(f) },
			args:    map[string]any{},
			wantErr: []string{"name: is required"},
		},
	})
}

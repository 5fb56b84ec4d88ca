package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// with returns a copy of m with each key/value pair set.
func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

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
			name:  "examples reach the factory, checked against the input schema first",
			setup: func(t *testing.T, f fixture) { withSkills(f) },
			args: with(args, "inputSchema", json.RawMessage(csvSchema), "examples", []map[string]any{
				{"input": map[string]any{"csv": "a\n1"}, "output": map[string]any{"a": 1}}}),
			want: skillSummary{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-owner"},
			check: func(t *testing.T, f fixture, _ skillSummary) {
				spec := f.env.Skills.(*fakeSkills).specs[0]
				if len(spec.Examples) != 1 || string(spec.Examples[0].Input) != `{"csv":"a\n1"}` || string(spec.Examples[0].Output) != `{"a":1}` || !spec.ByHuman {
					t.Errorf("spec = %+v; want the example, asked by a human (the owner)", spec)
				}
			},
		},
		{
			name:  "an example that could never be called",
			setup: func(t *testing.T, f fixture) { withSkills(f) },
			args: with(args, "inputSchema", json.RawMessage(csvSchema), "examples", []map[string]any{
				{"input": map[string]any{"csv": "a\n1"}, "output": 1}, {"input": map[string]any{"rows": 2}, "output": 2}}),
			wantErr: []string{"examples[1].input: does not match inputSchema"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:       "an AI worker's build, narrated on its activation log",
			setup:      func(t *testing.T, f fixture) { withSkills(f) },
			caller:     "w-echo",
			activation: "a-build",
			args:       args,
			want:       skillSummary{Name: "csv_sum", Version: 1, Status: "ready", Tool: "skill_csv_sum", CreatedBy: "w-echo"},
			check: func(t *testing.T, f fixture, _ skillSummary) {
				if spec := f.env.Skills.(*fakeSkills).specs[0]; spec.ByHuman {
					t.Errorf("an AI worker's build was marked as a human's")
				}
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + "w-echo"}})
				if err != nil || len(evs) == 0 {
					t.Fatalf("activation log: %v, %v", evs, err)
				}
				last := evs[len(evs)-1]
				if last.Message.Subject != "note" || last.Message.Body != "building skill csv_sum" || last.CausedBy != "a-build" {
					t.Errorf("narration = %+v", last)
				}
			},
		},
		{
			name:    "no Docker",
			args:    args,
			wantErr: []string{"skills are not available on this server"},
		},
	})
}

package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
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
			name: "base64 content that is not base64",
			setup: func(t *testing.T, f fixture) {
				create(t, f)
				f.env.Skills.(*fakeSkills).output = json.RawMessage(`{"file":{"name":"x.png","base64":"!!"}}`)
			},
			args:    map[string]any{"name": "csv_sum", "input": map[string]any{"csv": "a\n1"}},
			wantErr: []string{"skill csv_sum: its output file x.png: base64: illegal base64 data"},
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

// TestSkillFileBecomesAttachment: a skill answering {"file": …} hands its
// caller an attachment ref, and get_attachment returns the content.
func TestSkillFileBecomesAttachment(t *testing.T) {
	f := newFixture(t)
	fs := withSkills(f)
	mustCall[any](t, f.env, "create_skill", map[string]any{"name": "chart", "description": "d", "template": "python", "handler": "x"})
	fs.output = json.RawMessage(`{"rows":2,"file":{"name":"chart.svg","contentType":"image/svg+xml","text":"<svg/>"}}`)
	got := mustCall[struct{ Output json.RawMessage }](t, f.env, "call_skill", map[string]any{"name": "chart", "input": map[string]any{}})
	var o struct {
		Rows int               `json:"rows"`
		File domain.Attachment `json:"file"`
	}
	if err := json.Unmarshal(got.Output, &o); err != nil || o.Rows != 2 || o.File.Name != "chart.svg" || o.File.Size != 6 || o.File.Ref == "" {
		t.Fatalf("output = %s (%v)", got.Output, err)
	}
	att := mustCall[getAttachmentOut](t, f.env, "get_attachment", map[string]any{"ref": o.File.Ref})
	if att.Text != "<svg/>" || att.Attachment.ContentType != "image/svg+xml" {
		t.Errorf("attachment = %+v", att)
	}
}

// TestSkillOutputLabel: a skill's answer carries the label of its code,
// and a skill that joins a network beyond its own answers with outside
// words: the run that calls it reads untrusted data from then on.
func TestSkillOutputLabel(t *testing.T) {
	tests := []struct {
		name      string
		networks  []string
		untrusted string
	}{
		{name: "no network"},
		{name: "egress", networks: []string{"egress"}, untrusted: `skill "lookup", which joins networks egress`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := labelFixture(t)
			fs := withSkills(f)
			mustCall[any](t, f.env, "create_skill", map[string]any{"name": "lookup", "description": "d", "template": "shell", "handler": "echo"})
			fs.networks = map[string][]string{"lookup": tt.networks}
			f.grant(t, "w-desk", "skill_lookup", "call_skill")
			must(t)(f.env.Store.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: "w-maya", Message: domain.Message{Body: "look it up"}}, store.AppendOptions{}))
			run := claim(t, f)
			invokeAs(t, f, "w-desk", run, "call_skill", `{"name":"lookup","input":{}}`)
			label, err := f.env.Store.ActivationLabel(t.Context(), run)
			if err != nil {
				t.Fatal(err)
			}
			if label.Untrusted != (tt.untrusted != "") || !strings.Contains(label.Origin, tt.untrusted) {
				t.Errorf("run's label = %s, want untrusted %v from %q", label, tt.untrusted != "", tt.untrusted)
			}
		})
	}
}

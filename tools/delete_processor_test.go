package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestDeleteProcessor(t *testing.T) {
	made := func(t *testing.T, f fixture) {
		withLead(t, f)
		f.grant(t, "w-desk", "create_processor")
		mustCall[procView](t, f.as("w-desk"), "create_processor", map[string]any{"id": "proc-a", "input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-a"}})
	}
	runTable(t, "delete_processor", []toolCase[procView]{
		{name: "by its creator", setup: made, caller: "w-desk", args: map[string]any{"id": "proc-a"},
			want: procView{ID: "proc-a", Input: "s-inbox", Kind: "filter", Outputs: []string{"s-a"}},
			check: func(t *testing.T, f fixture, _ procView) {
				if _, err := f.env.Store.GetProcessor(t.Context(), "proc-a"); err == nil {
					t.Error("the processor is still there")
				}
			}},
		{name: "by a worker above its creator", setup: made, caller: "w-lead", args: map[string]any{"id": "proc-a"},
			want: procView{ID: "proc-a", Input: "s-inbox", Kind: "filter", Outputs: []string{"s-a"}}},
		{name: "not by a worker beside it", setup: made, caller: "w-maya", args: map[string]any{"id": "proc-a"}, wantIs: domain.ErrForbidden},
		{name: "one that does not exist", args: map[string]any{"id": "proc-nope"}, wantErr: []string{`processor "proc-nope"`}, wantIs: domain.ErrNotFound},
		{name: "no id", args: map[string]any{}, wantErr: []string{"id: is required"}},
	})
}

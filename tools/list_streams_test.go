package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestListStreams(t *testing.T) {
	type out struct {
		Streams []streamView `json:"streams"`
	}
	addHook := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook",
			Transport: domain.Transport{Kind: domain.TransportKind("webhook"), Config: []byte(`{"secret":"` + secret + `"}`)}}))
	}
	activations := view("s-activations-w-echo", "activations w-echo", "local", map[string]any{})
	activations.Description = "Activation log of w-echo: runs, tool calls and results. Never wakes anyone."
	org := view("s-org", "org", "local", map[string]any{})
	org.Description, org.CreatedBy = "Audit trail of every change to the org graph.", ""
	runTable(t, "list_streams", []toolCase[out]{
		{
			name: "every stream by id, system streams included",
			want: out{Streams: []streamView{activations, view("s-inbox", "inbox", "local", map[string]any{}), org}},
		},
		{
			name:  "only one kind, with secrets redacted",
			setup: addHook,
			args:  map[string]any{"kind": "webhook"},
			want:  out{Streams: []streamView{view("s-hook", "hook", "webhook", map[string]any{"secret": domain.Redacted})}},
		},
		{
			name: "no match gives an empty list",
			args: map[string]any{"kind": "github"},
			want: out{Streams: []streamView{}},
		},
		{
			name:    "unknown kind lists the valid kinds",
			args:    map[string]any{"kind": "smtp"},
			wantErr: []string{`kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "chat")`},
		},
	})
}

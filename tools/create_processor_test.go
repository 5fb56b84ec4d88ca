package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// procView is a processor as a table compares it.
type procView struct {
	ID      string   `json:"id"`
	Input   string   `json:"input"`
	Kind    string   `json:"kind"`
	Outputs []string `json:"outputs"`
}

const invoiceFilter = `message.subject.contains("invoice")`

func TestCreateProcessor(t *testing.T) {
	private := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-secret", Name: "secret", Private: true, Transport: domain.Transport{Kind: domain.TransportLocal}}))
	}
	chain := func(t *testing.T, f fixture) {
		mustCall[procView](t, f.env, "create_processor", map[string]any{"id": "proc-a", "input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-b"}})
		mustCall[procView](t, f.env, "create_processor", map[string]any{"id": "proc-b", "input": "s-b", "kind": "truncate", "config": map[string]any{"max_bytes": 100}, "outputs": []string{"s-c"}})
	}
	runTable(t, "create_processor", []toolCase[procView]{
		{
			name: "a filter; its output stream is created as a local stream",
			args: map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": invoiceFilter}, "outputs": []string{"s-invoices"}},
			want: procView{ID: "proc-filter-inbox", Input: "s-inbox", Kind: "filter", Outputs: []string{"s-invoices"}},
			check: func(t *testing.T, f fixture, _ procView) {
				st, err := f.env.Store.GetStream(t.Context(), "s-invoices")
				if err != nil || st.Transport.Kind != domain.TransportLocal || st.CreatedBy != store.OwnerWorker {
					t.Errorf("output stream = %+v, %v; want a local stream the caller created", st, err)
				}
				if c := lastOrgChange(t, f.env.Store); c.Action != "create_processor" || c.Target != "proc-filter-inbox" {
					t.Errorf("last change = %s %s; want create_processor", c.Action, c.Target)
				}
			},
		},
		{
			name: "a route's outputs follow from its routes",
			args: map[string]any{"id": "proc-triage", "input": "s-inbox", "kind": "route", "config": map[string]any{
				"routes": []map[string]any{{"expr": invoiceFilter, "output": "s-invoices"}, {"expr": `message.subject.startsWith("Re:")`, "output": "s-replies"}}, "default": "s-rest"}},
			want: procView{ID: "proc-triage", Input: "s-inbox", Kind: "route", Outputs: []string{"s-invoices", "s-replies", "s-rest"}},
		},
		{
			name:  "a chain of processors",
			setup: chain,
			args:  map[string]any{"id": "proc-c", "input": "s-c", "kind": "template", "config": map[string]any{"body": "{{.message.body}}"}, "outputs": []string{"s-d"}},
			want:  procView{ID: "proc-c", Input: "s-c", Kind: "template", Outputs: []string{"s-d"}},
		},
		{
			name:    "a cycle is refused, naming it",
			setup:   chain,
			args:    map[string]any{"id": "proc-c", "input": "s-c", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-inbox"}},
			wantErr: []string{"outputs: would close a cycle of processors: s-c → s-inbox (proc-a) → s-b (proc-b) → s-c"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "its own input as output",
			args:    map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-inbox"}},
			wantErr: []string{"outputs[0]: s-inbox is the processor's input"},
		},
		{
			name:    "bad CEL is refused with its position",
			args:    map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": `message.subject.contains("invoice") &&`}, "outputs": []string{"s-x"}},
			wantErr: []string{"config.expr: does not compile", "config.expr:1:39: Syntax error"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "an unknown kind lists the kinds",
			args:    map[string]any{"input": "s-inbox", "kind": "javascript", "config": map[string]any{}, "outputs": []string{"s-x"}},
			wantErr: []string{`kind: unknown processor kind "javascript"`, `"route"`},
		},
		{
			name:    "an input that does not exist",
			args:    map[string]any{"input": "s-nope", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-x"}},
			wantErr: []string{`stream "s-nope"`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name: "an output on an outside stream is refused",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: "webhook"}}))
			},
			args:    map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-hook"}},
			wantErr: []string{"outputs[0]: s-hook is a webhook stream; a processor writes only to local streams"},
		},
		{
			name:    "an output the system writes is refused",
			args:    map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{domain.InboxStream("w-echo")}},
			wantErr: []string{"is a stream the system writes"},
		},
		{
			name:    "a private input may not flow to a stream the org reads",
			setup:   private,
			args:    map[string]any{"input": "s-secret", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-public"}},
			wantErr: []string{"s-public would let its readers read what only"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "an activation log is not an input",
			args:    map[string]any{"input": domain.ActivationStreamPrefix + "w-echo", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-x"}},
			wantErr: []string{"is an activation log"},
		},
	})
}

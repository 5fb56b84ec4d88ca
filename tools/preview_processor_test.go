package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestPreviewProcessor(t *testing.T) {
	posted := func(t *testing.T, f fixture) {
		for _, subject := range []string{"invoice 1", "lunch", "invoice 2"} {
			must(t)(f.env.Store.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: "w-maya", Message: domain.Message{Subject: subject, Body: "b"}}, store.AppendOptions{}))
		}
	}
	type event struct {
		Subject string `json:"subject"`
		Outputs []struct {
			Stream string `json:"stream"`
		} `json:"outputs"`
		Error string `json:"error"`
	}
	type out struct {
		Input   string  `json:"input"`
		Events  []event `json:"events"`
		Passed  int     `json:"passed"`
		Dropped int     `json:"dropped"`
		Failed  int     `json:"failed"`
	}
	pass := func(subject, stream string) event {
		return event{Subject: subject, Outputs: []struct {
			Stream string `json:"stream"`
		}{{stream}}}
	}
	spec := map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": invoiceFilter}, "outputs": []string{"s-invoices"}}
	runTable(t, "preview_processor", []toolCase[out]{
		{name: "a definition over the latest events, writing nothing", setup: posted, args: map[string]any{"spec": spec},
			want: out{Input: "s-inbox", Events: []event{pass("invoice 1", "s-invoices"), {Subject: "lunch"}, pass("invoice 2", "s-invoices")}, Passed: 2, Dropped: 1},
			check: func(t *testing.T, f fixture, _ out) {
				if _, err := f.env.Store.GetStream(t.Context(), "s-invoices"); err == nil {
					t.Error("a preview created the output stream")
				}
			}},
		{name: "the last one only", setup: posted, args: map[string]any{"spec": spec, "last": 1},
			want: out{Input: "s-inbox", Events: []event{pass("invoice 2", "s-invoices")}, Passed: 1}},
		{name: "a stored processor", setup: func(t *testing.T, f fixture) {
			posted(t, f)
			mustCall[procView](t, f.env, "create_processor", map[string]any{"id": "proc-r", "input": "s-inbox", "kind": "route", "config": map[string]any{
				"routes": []map[string]any{{"expr": invoiceFilter, "output": "s-invoices"}}, "default": "s-rest"}})
		}, args: map[string]any{"id": "proc-r"},
			want: out{Input: "s-inbox", Events: []event{pass("invoice 1", "s-invoices"), pass("lunch", "s-rest"), pass("invoice 2", "s-invoices")}, Passed: 3}},
		{name: "an expression that fails on an event says why", setup: posted,
			args: map[string]any{"spec": map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": `message.extra.action == "x"`}, "outputs": []string{"s-x"}}, "last": 1},
			want: out{Input: "s-inbox", Events: []event{{Subject: "invoice 2", Error: `config.expr: no such key: action`}}, Failed: 1}},
		{name: "neither id nor spec", args: map[string]any{}, wantErr: []string{"id: give either id, a stored processor, or spec"}},
		{name: "too many events", args: map[string]any{"spec": spec, "last": 1000}, wantErr: []string{"last: is 1000; it must be 1 to 100"}},
		{name: "bad CEL in a spec", args: map[string]any{"spec": map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "message.nope"}, "outputs": []string{"s-x"}}},
			wantErr: []string{"config.expr:1:8: undefined field 'nope'"}},
	}, cmpopts.EquateEmpty())
}

package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestListProcessors(t *testing.T) {
	two := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-other", Name: "other", Transport: domain.Transport{Kind: domain.TransportLocal}}))
		mustCall[procView](t, f.env, "create_processor", map[string]any{"id": "proc-a", "input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "true"}, "outputs": []string{"s-a"}})
		mustCall[procView](t, f.env, "create_processor", map[string]any{"id": "proc-b", "input": "s-other", "kind": "truncate", "config": map[string]any{"max_bytes": 10}, "outputs": []string{"s-b"}})
	}
	type out struct {
		Processors []procView `json:"processors"`
	}
	runTable(t, "list_processors", []toolCase[out]{
		{name: "none", want: out{Processors: []procView{}}},
		{name: "every one", setup: two, want: out{Processors: []procView{
			{ID: "proc-a", Input: "s-inbox", Kind: "filter", Outputs: []string{"s-a"}},
			{ID: "proc-b", Input: "s-other", Kind: "truncate", Outputs: []string{"s-b"}}}}},
		{name: "by an output stream", setup: two, args: map[string]any{"stream": "s-b"}, want: out{Processors: []procView{
			{ID: "proc-b", Input: "s-other", Kind: "truncate", Outputs: []string{"s-b"}}}}},
		{name: "a stream that does not exist", args: map[string]any{"stream": "s-nope"}, wantErr: []string{`stream "s-nope"`}, wantIs: domain.ErrNotFound},
	})
}

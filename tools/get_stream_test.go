package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestGetStream(t *testing.T) {
	type out struct {
		Stream  streamView `json:"stream"`
		Members []string   `json:"members"`
	}
	runTable(t, "get_stream", []toolCase[out]{
		{
			name: "a stream without members",
			args: map[string]any{"id": "s-inbox"},
			want: out{Stream: view("s-inbox", "inbox", "local", map[string]any{}), Members: []string{}},
		},
		{
			name: "members by id",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.Subscribe(t.Context(), store.OwnerWorker, "s-inbox", "w-owner", "w-maya"))
			},
			args: map[string]any{"id": "s-inbox"},
			want: out{Stream: view("s-inbox", "inbox", "local", map[string]any{}), Members: []string{"w-maya", "w-owner"}},
		},
		{
			name: "webhook secret redacted",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook",
					Transport: domain.Transport{Kind: domain.TransportKind("webhook"), Config: []byte(`{"secret":"` + secret + `","outbound_url":"https://example.com"}`)}}))
			},
			args: map[string]any{"id": "s-hook"},
			want: out{Stream: view("s-hook", "hook", "webhook", map[string]any{"secret": domain.Redacted, "outbound_url": "https://example.com"}), Members: []string{}},
		},
		{
			name:    "missing id",
			wantErr: []string{"id: is required"},
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "s-nope"},
			wantErr: []string{`stream "s-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

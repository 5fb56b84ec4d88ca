package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

func TestStreamMembers(t *testing.T) {
	type member struct {
		Worker string    `json:"worker"`
		Name   string    `json:"name"`
		Kind   string    `json:"kind"`
		Since  time.Time `json:"since"`
	}
	type out struct {
		Stream  string   `json:"stream"`
		Members []member `json:"members"`
	}
	later := t0.Add(time.Hour)
	runTable(t, "stream_members", []toolCase[out]{
		{
			name: "members with name, kind and when they joined",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-maya"))
				f.clock.Advance(time.Hour)
				must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-echo"))
			},
			args: map[string]any{"stream": "s-inbox"},
			want: out{Stream: "s-inbox", Members: []member{
				{Worker: "w-echo", Name: "Echo", Kind: "ai", Since: later},
				{Worker: "w-maya", Name: "Maya", Kind: "human", Since: t0},
			}},
		},
		{
			name: "no members gives an empty list",
			args: map[string]any{"stream": "s-inbox"},
			want: out{Stream: "s-inbox", Members: []member{}},
		},
		{
			name:    "missing stream",
			wantErr: []string{"stream: is required"},
		},
		{
			name:    "unknown stream",
			args:    map[string]any{"stream": "s-nope"},
			wantErr: []string{`stream "s-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

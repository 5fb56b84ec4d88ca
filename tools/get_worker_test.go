package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestGetWorker(t *testing.T) {
	type out struct {
		Worker   domain.Worker   `json:"worker"`
		Position domain.Position `json:"position"`
		Streams  []string        `json:"streams"`
	}
	supportPos := domain.Position{ID: "p-support", RoleID: "r-support", Title: "Support 1", CreatedAt: t0}
	maya := domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Maya", HiredBy: "w-owner", HiredAt: t0}
	runTable(t, "get_worker", []toolCase[out]{
		{
			name:   "yourself when no id is given",
			caller: "w-maya",
			want:   out{Worker: maya, Position: supportPos, Streams: []string{}},
		},
		{
			name: "another worker with the streams it follows",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "subscribe", map[string]any{"stream": "s-inbox", "worker": "w-maya"})
			},
			args: map[string]any{"id": "w-maya"},
			want: out{Worker: maya, Position: supportPos, Streams: []string{"s-inbox"}},
		},
		{
			name: "the owner follows s-org from bootstrap and the activation log of the ai it hired",
			args: map[string]any{"id": "w-owner"},
			want: out{
				Worker:   domain.Worker{ID: "w-owner", Kind: domain.WorkerHuman, PositionID: "p-owner", Name: "Owner", Identity: "The organisation's owner.", HiredAt: t0},
				Position: domain.Position{ID: "p-owner", RoleID: "r-owner", Title: "Owner", CreatedAt: t0},
				Streams:  []string{"s-activations-w-echo", "s-org"},
			},
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "w-nope"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

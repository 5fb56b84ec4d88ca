package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

func TestDismissWorker(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	runTable(t, "dismiss_worker", []toolCase[domain.Worker]{
		{
			name:  "dismissed at the current time",
			setup: func(t *testing.T, f fixture) { f.clock.Advance(2 * time.Hour) },
			args:  map[string]any{"id": "w-maya"},
			want:  domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Maya", HiredBy: "w-owner", HiredAt: t0, DismissedAt: &later},
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				c := lastOrgChange(t, f.env.Store)
				before, _ := c.Before.(map[string]any)
				after, _ := c.After.(map[string]any)
				if c.Action != "dismiss_worker" || c.Target != "w-maya" || before["dismissedAt"] != nil || after["dismissedAt"] == nil {
					t.Errorf("s-org change = %+v, want dismiss_worker of w-maya with before/after", c)
				}
			},
		},
		{
			name:    "cannot dismiss yourself",
			args:    map[string]any{"id": "w-owner"},
			wantErr: []string{"id: you cannot dismiss yourself"},
		},
		{
			name:    "missing id",
			wantErr: []string{"id: is required"},
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "w-nope"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name: "already dismissed",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
			},
			args:    map[string]any{"id": "w-maya"},
			wantErr: []string{`worker "w-maya" was already dismissed`},
			wantIs:  domain.ErrConflict,
		},
	})
}

package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestUpdateIdentity(t *testing.T) {
	maya := func(identity string) domain.Worker {
		return domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Maya", Identity: identity, HiredBy: "w-owner", HiredAt: t0}
	}
	runTable(t, "update_identity", []toolCase[domain.Worker]{
		{
			name:   "your own identity when no id is given",
			caller: "w-maya",
			args:   map[string]any{"identity": "I answer billing tickets."},
			want:   maya("I answer billing tickets."),
			check: func(t *testing.T, f fixture, _ domain.Worker) {
				c := lastOrgChange(t, f.env.Store)
				if c.Action != "update_identity" || c.Actor != "w-maya" || c.Target != "w-maya" {
					t.Errorf("s-org change = %+v, want update_identity of w-maya by w-maya", c)
				}
			},
		},
		{
			name: "another worker's identity",
			args: map[string]any{"id": "w-maya", "identity": "Billing."},
			want: maya("Billing."),
		},
		{
			name:    "unknown id",
			args:    map[string]any{"id": "w-nope", "identity": "x"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "identity over the limit",
			args:    map[string]any{"id": "w-maya", "identity": strings.Repeat("x", domain.MaxIdentity+1)},
			wantErr: []string{"identity: is 65537 bytes; the limit is 65536"},
		},
	})
}

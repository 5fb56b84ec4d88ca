package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

type subscribeOutView struct {
	Stream  string `json:"stream"`
	Worker  string `json:"worker"`
	Changed bool   `json:"changed"`
}

// assertMembers compares a stream's member ids with want.
func assertMembers(t *testing.T, f fixture, stream string, want ...string) {
	t.Helper()
	subs, err := f.env.Store.StreamMembers(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, s := range subs {
		got = append(got, s.WorkerID)
	}
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members of %s (-want +got):\n%s", stream, diff)
	}
}

func TestSubscribe(t *testing.T) {
	runTable(t, "subscribe", []toolCase[subscribeOutView]{
		{
			name:   "yourself when no worker is given",
			caller: "w-maya",
			args:   map[string]any{"stream": "s-inbox"},
			want:   subscribeOutView{Stream: "s-inbox", Worker: "w-maya", Changed: true},
			check: func(t *testing.T, f fixture, _ subscribeOutView) {
				assertMembers(t, f, "s-inbox", "w-maya")
				if c := lastOrgChange(t, f.env.Store); c.Action != "subscribe" || c.Actor != "w-maya" || c.Target != "w-maya" {
					t.Errorf("s-org change = %+v, want subscribe of w-maya by w-maya", c)
				}
			},
		},
		{
			name:  "idempotent: already a member changes nothing",
			setup: func(t *testing.T, f fixture) { must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-maya")) },
			args:  map[string]any{"stream": "s-inbox", "worker": "w-maya"},
			want:  subscribeOutView{Stream: "s-inbox", Worker: "w-maya", Changed: false},
			check: func(t *testing.T, f fixture, _ subscribeOutView) { assertMembers(t, f, "s-inbox", "w-maya") },
		},
		{
			name:   "a worker subscribes a worker below it",
			setup:  withLead,
			caller: "w-lead",
			args:   map[string]any{"stream": "s-inbox", "worker": "w-desk"},
			want:   subscribeOutView{Stream: "s-inbox", Worker: "w-desk", Changed: true},
			check:  func(t *testing.T, f fixture, _ subscribeOutView) { assertMembers(t, f, "s-inbox", "w-desk") },
		},
		{
			name:    "not a peer",
			caller:  "w-maya",
			args:    map[string]any{"stream": "s-inbox", "worker": "w-echo"},
			wantErr: []string{"w-maya may only manage workers below p-support; w-echo (p-support) is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "s-org is the owner's alone",
			caller:  "w-maya",
			args:    map[string]any{"stream": "s-org"},
			wantErr: []string{"s-org is the org's audit trail; only w-owner reads it"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "nor can the owner subscribe another to s-org",
			args:    map[string]any{"stream": "s-org", "worker": "w-maya"},
			wantErr: []string{"only w-owner reads it"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "a peer's activation log",
			caller:  "w-maya",
			args:    map[string]any{"stream": "s-activations-w-echo"},
			wantErr: []string{"w-maya may only read the activation logs of workers below p-support (and its own); w-echo (p-support) is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:   "the log of a worker below you",
			setup:  withLead,
			caller: "w-lead",
			args:   map[string]any{"stream": "s-activations-w-desk"},
			want:   subscribeOutView{Stream: "s-activations-w-desk", Worker: "w-lead", Changed: true},
		},
		{
			name:    "a worker below you is not subscribed to a log it may not read",
			setup:   withLead,
			args:    map[string]any{"stream": "s-activations-w-echo", "worker": "w-desk"},
			wantErr: []string{"w-desk may only read the activation logs of workers below p-desk (and its own); w-echo (p-support) is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "missing stream",
			args:    map[string]any{"worker": "w-maya"},
			wantErr: []string{"stream: is required"},
		},
		{
			name:    "unknown stream",
			args:    map[string]any{"stream": "s-nope"},
			wantErr: []string{`stream "s-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "unknown worker",
			args:    map[string]any{"stream": "s-inbox", "worker": "w-nope"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name: "dismissed worker",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
			},
			args:    map[string]any{"stream": "s-inbox", "worker": "w-maya"},
			wantErr: []string{`worker "w-maya" is dismissed`},
			wantIs:  domain.ErrConflict,
		},
	})
}

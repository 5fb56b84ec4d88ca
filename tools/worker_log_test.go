package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestWorkerLog(t *testing.T) {
	logRun := func(t *testing.T, f fixture) {
		for _, body := range []string{"run started", "tool call: publish", "run exited 0"} {
			_, err := f.env.Store.Append(t.Context(), domain.Event{StreamID: "s-activations-w-echo", Message: domain.Message{Body: body}}, store.AppendOptions{})
			if err != nil {
				t.Fatalf("append to the activation log: %v", err)
			}
		}
	}
	runTable(t, "worker_log", []toolCase[readOut]{
		{
			name:    "missing worker",
			wantErr: []string{"worker: is required"},
		},
		{
			name:    "unknown worker",
			args:    map[string]any{"worker": "w-nope"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "a human has no activation log",
			args:    map[string]any{"worker": "w-maya"},
			wantErr: []string{"worker: w-maya is a human worker; only AI workers have an activation log"},
		},
		{
			name:    "wait over the cap",
			args:    map[string]any{"worker": "w-echo", "wait": 61},
			wantErr: []string{"wait: must be between 0 and 60 seconds"},
		},
		{
			name:    "a peer's log",
			caller:  "w-maya",
			args:    map[string]any{"worker": "w-echo"},
			wantErr: []string{"w-maya may only read the activation logs of workers below p-support (and its own); w-echo (p-support) is not"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "a manager's log",
			setup:   withLead,
			caller:  "w-desk",
			args:    map[string]any{"worker": "w-lead"},
			wantErr: []string{"w-lead is a human worker"},
		},
		{
			name:   "a report's log",
			setup:  withLead,
			caller: "w-lead",
			args:   map[string]any{"worker": "w-desk", "since": 7},
			want:   readOut{Events: []domain.Event{}, Cursor: 7},
		},
		{
			name:   "your own log",
			caller: "w-echo",
			args:   map[string]any{"worker": "w-echo", "since": 7},
			want:   readOut{Events: []domain.Event{}, Cursor: 7},
		},
		{
			name: "an empty log keeps the cursor",
			args: map[string]any{"worker": "w-echo", "since": 7},
			want: readOut{Events: []domain.Event{}, Cursor: 7},
		},
	})

	t.Run("entries oldest first, paged by the cursor", func(t *testing.T) {
		f := newFixture(t)
		logRun(t, f)
		first := mustCall[readOut](t, f.env, "worker_log", map[string]any{"worker": "w-echo", "limit": 2})
		if diff := cmp.Diff([]string{"run started", "tool call: publish"}, bodies(first)); diff != "" {
			t.Errorf("first page (-want +got):\n%s", diff)
		}
		rest := mustCall[readOut](t, f.env, "worker_log", map[string]any{"worker": "w-echo", "since": first.Cursor})
		if diff := cmp.Diff([]string{"run exited 0"}, bodies(rest)); diff != "" {
			t.Errorf("second page (-want +got):\n%s", diff)
		}
	})
}

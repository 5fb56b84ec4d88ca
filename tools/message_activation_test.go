package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestMessageActivation(t *testing.T) {
	taken := func(worker, run string, want ...string) func(t *testing.T, f fixture, _ messageActivationOut) {
		return func(t *testing.T, f fixture, _ messageActivationOut) {
			msgs, err := f.env.Store.TakeSteering(t.Context(), worker, run)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.From+": "+m.Body)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s took %q, want %q", run, got, want)
			}
		}
	}
	runTable(t, "message_activation", []toolCase[messageActivationOut]{
		{
			name:  "the owner steers a run: the run takes the message",
			setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args:  map[string]any{"activation": "a-run", "body": "stop and summarise"},
			want:  messageActivationOut{ID: 1, Activation: "a-run", WorkerID: "w-echo", Delivery: steerDelivery},
			check: taken("w-echo", "a-run", "w-owner: stop and summarise"),
		},
		{
			name: "a manager steers a run below them",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-desk", "a-desk")
			},
			caller: "w-lead",
			args:   map[string]any{"activation": "a-desk", "body": "use the short form"},
			want:   messageActivationOut{ID: 1, Activation: "a-desk", WorkerID: "w-desk", Delivery: steerDelivery},
			check:  taken("w-desk", "a-desk", "w-lead: use the short form"),
		},
		{
			name: "not a manager of the worker",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-echo", "a-run")
			},
			caller:  "w-lead",
			args:    map[string]any{"activation": "a-run", "body": "x"},
			wantErr: []string{"w-lead"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name: "an ended run",
			setup: func(t *testing.T, f fixture) {
				running(t, f, "w-echo", "a-run")
				mustCall[any](t, f.env, "cancel_activation", map[string]any{"activation": "a-run"})
			},
			args:    map[string]any{"activation": "a-run", "body": "x"},
			wantErr: []string{"activation a-run is cancelled, not running"},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "unknown activation",
			args:    map[string]any{"activation": "a-nope", "body": "x"},
			wantErr: []string{`activation "a-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "missing activation",
			args:    map[string]any{"body": "x"},
			wantErr: []string{"activation: is required"},
		},
		{
			name:    "missing body",
			args:    map[string]any{"activation": "a-run"},
			wantErr: []string{"body: is required"},
		},
		{
			name:    "body over events.max_body_bytes",
			setup:   maxBodyOf("10"),
			args:    map[string]any{"activation": "a-run", "body": "far more than ten bytes"},
			wantErr: []string{"body: is 23 bytes, over events.max_body_bytes 10"},
		},
	})
}

package tools

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// running claims a run of worker over a fresh event, as the dispatcher would.
func running(t *testing.T, f fixture, worker, id string) {
	t.Helper()
	ctx := t.Context()
	st := f.env.Store
	f.follow(t, worker, "s-inbox")
	must(t)(st.Append(ctx, domain.Event{StreamID: "s-inbox", Source: store.OwnerWorker, Message: domain.Message{Body: "work"}}, store.AppendOptions{}))
	if _, _, _, err := st.Claim(ctx, worker, id, time.Hour); err != nil {
		t.Fatalf("setup: claim: %v", err)
	}
}

func triggerStatus(t *testing.T, f fixture, worker string) domain.TriggerStatus {
	t.Helper()
	trigs, err := f.env.Store.ListTriggers(t.Context(), store.TriggerQuery{Worker: worker})
	if err != nil || len(trigs) == 0 {
		t.Fatalf("triggers of %s: %v, %v", worker, trigs, err)
	}
	return trigs[len(trigs)-1].Status
}

func TestCancelActivation(t *testing.T) {
	runTable(t, "cancel_activation", []toolCase[cancelActivationOut]{
		{
			name:  "the owner cancels: the trigger runs again",
			setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args:  map[string]any{"activation": "a-run"},
			want:  cancelActivationOut{ID: "a-run", WorkerID: "w-echo", Status: domain.ActivationCancelled},
			check: func(t *testing.T, f fixture, _ cancelActivationOut) {
				if s := triggerStatus(t, f, "w-echo"); s != domain.TriggerPending {
					t.Errorf("trigger is %s, want pending", s)
				}
				if a, _ := f.env.Store.GetActivation(t.Context(), "a-run"); a.Error != "cancelled by w-owner" {
					t.Errorf("activation error = %q", a.Error)
				}
			},
		},
		{
			name: "a manager cancels with drop: the trigger is dropped",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-desk", "a-desk")
			},
			caller: "w-lead",
			args:   map[string]any{"activation": "a-desk", "drop": true},
			want:   cancelActivationOut{ID: "a-desk", WorkerID: "w-desk", Status: domain.ActivationCancelled},
			check: func(t *testing.T, f fixture, _ cancelActivationOut) {
				if s := triggerStatus(t, f, "w-desk"); s != domain.TriggerDropped {
					t.Errorf("trigger is %s, want dropped", s)
				}
			},
		},
		{
			name: "not a manager of the worker",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-echo", "a-run")
			},
			caller:  "w-lead",
			args:    map[string]any{"activation": "a-run"},
			wantErr: []string{"w-lead"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name: "already ended",
			setup: func(t *testing.T, f fixture) {
				running(t, f, "w-echo", "a-run")
				mustCall[any](t, f.env, "cancel_activation", map[string]any{"activation": "a-run"})
			},
			args:    map[string]any{"activation": "a-run"},
			wantErr: []string{"activation a-run is cancelled, not running"},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing activation",
			wantErr: []string{"activation: is required"},
		},
		{
			name:    "unknown activation",
			args:    map[string]any{"activation": "a-nope"},
			wantErr: []string{`activation "a-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
	})
}

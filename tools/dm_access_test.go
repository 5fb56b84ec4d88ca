package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestDMStreamsArePrivate: whatever tools a third worker holds, it can
// neither read, post to, nor join two other workers' direct messages.
func TestDMStreamsArePrivate(t *testing.T) {
	const dmStream = "s-dm-w-maya-w-owner"
	setup := func(t *testing.T, f fixture) {
		mustCall[any](t, f.env, "dm", map[string]any{"to": "w-maya", "body": "private"})
		must(t)(f.env.Store.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: "w-eve", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Eve"}, nil))
	}
	t.Run("read_events", func(t *testing.T) {
		runTable(t, "read_events", []toolCase[any]{{
			name: "outsider cannot read", setup: setup, caller: "w-eve",
			args: map[string]any{"streams": []string{dmStream}}, wantErr: []string{"stream:", "direct-message stream", "only its two members"},
		}})
	})
	t.Run("publish", func(t *testing.T) {
		runTable(t, "publish", []toolCase[any]{{
			name: "outsider cannot post", setup: setup, caller: "w-eve",
			args: map[string]any{"stream": dmStream, "body": "hi"}, wantErr: []string{"direct-message stream"},
		}})
	})
	t.Run("subscribe", func(t *testing.T) {
		runTable(t, "subscribe", []toolCase[any]{{
			name: "nobody joins a DM", setup: setup, caller: "w-eve",
			args: map[string]any{"stream": dmStream}, wantErr: []string{"members are fixed"},
		}})
	})
	t.Run("invite_workers", func(t *testing.T) {
		runTable(t, "invite_workers", []toolCase[any]{{
			name: "nobody is invited into a DM", setup: setup,
			args: map[string]any{"stream": dmStream, "workers": []string{"w-eve"}}, wantErr: []string{"members are fixed"},
		}})
	})
	t.Run("member reads", func(t *testing.T) {
		f := newFixture(t)
		setup(t, f)
		out := mustCall[readEventsOut](t, f.as("w-maya"), "read_events", map[string]any{"streams": []string{dmStream}})
		if len(out.Events) != 1 || out.Events[0].Message.Body != "private" {
			t.Errorf("member read %+v", out.Events)
		}
	})
}

package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestDMStreamsArePrivate: whatever tools a third worker holds and wherever
// it sits in the chart (the owner included), it can neither read, post to,
// list, join nor change the members of two other workers' direct messages.
func TestDMStreamsArePrivate(t *testing.T) {
	const dmStream = "s-dm-w-echo-w-maya"
	setup := func(t *testing.T, f fixture) {
		mustCall[any](t, f.as("w-maya"), "dm", map[string]any{"to": "w-echo", "body": "private"})
		must(t)(f.env.Store.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: "w-eve", Kind: domain.WorkerHuman, PositionID: "p-support", Name: "Eve"}, nil))
	}
	outsiders := []string{"w-eve", store.OwnerWorker}
	calls := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"read", "read_events", map[string]any{"streams": []string{dmStream}}, "only its two members read it"},
		{"post", "publish", map[string]any{"stream": dmStream, "body": "hi"}, "only its two members read it"},
		{"get", "get_stream", map[string]any{"id": dmStream}, "only its two members read it"},
		{"members", "stream_members", map[string]any{"stream": dmStream}, "only its two members read it"},
		{"join", "subscribe", map[string]any{"stream": dmStream}, "only its two members read it"},
		{"re-add a member", "subscribe", map[string]any{"stream": dmStream, "worker": "w-maya"}, "only its members join or leave it, each for itself"},
		{"evict a member", "unsubscribe", map[string]any{"stream": dmStream, "worker": "w-maya"}, "only its members join or leave it, each for itself"},
	}
	for _, who := range outsiders {
		for _, c := range calls {
			t.Run(who+" "+c.name, func(t *testing.T) {
				runTable(t, c.tool, []toolCase[any]{{
					name: "refused", setup: setup, caller: who, args: c.args,
					wantErr: []string{dmStream, c.want}, wantIs: domain.ErrForbidden,
				}})
			})
		}
	}
	t.Run("invite_workers", func(t *testing.T) {
		runTable(t, "invite_workers", []toolCase[any]{{
			name: "nobody is invited into a DM", setup: setup,
			args: map[string]any{"stream": dmStream, "workers": []string{"w-eve"}}, wantErr: []string{"direct-message stream", "each for itself"},
		}})
	})
	t.Run("the owner cannot evict a member", func(t *testing.T) {
		f := newFixture(t)
		setup(t, f)
		_, err := call[any](t, f.env, "unsubscribe", map[string]any{"stream": dmStream, "worker": "w-maya"})
		if err == nil {
			t.Fatal("the owner removed w-maya from its DM with w-echo")
		}
		assertMembers(t, f, dmStream, "w-echo", "w-maya")
	})
	t.Run("a member leaves and rejoins", func(t *testing.T) {
		f := newFixture(t)
		setup(t, f)
		mustCall[any](t, f.as("w-maya"), "unsubscribe", map[string]any{"stream": dmStream})
		assertMembers(t, f, dmStream, "w-echo")
		mustCall[any](t, f.as("w-maya"), "subscribe", map[string]any{"stream": dmStream})
		assertMembers(t, f, dmStream, "w-echo", "w-maya")
		out := mustCall[readEventsOut](t, f.as("w-maya"), "read_events", map[string]any{"streams": []string{dmStream}})
		if len(out.Events) != 1 || out.Events[0].Message.Body != "private" {
			t.Errorf("member read %+v", out.Events)
		}
	})
}

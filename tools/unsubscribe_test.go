package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestUnsubscribe(t *testing.T) {
	mayaFollowsInbox := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-maya", "w-owner"))
	}
	runTable(t, "unsubscribe", []toolCase[subscribeOutView]{
		{
			name:   "yourself when no worker is given",
			setup:  mayaFollowsInbox,
			caller: "w-maya",
			args:   map[string]any{"stream": "s-inbox"},
			want:   subscribeOutView{Stream: "s-inbox", Worker: "w-maya", Changed: true},
			check: func(t *testing.T, f fixture, _ subscribeOutView) {
				assertMembers(t, f, "s-inbox", "w-owner")
				if c := lastOrgChange(t, f.env.Store); c.Action != "unsubscribe" || c.Target != "w-maya" || c.Before == nil {
					t.Errorf("s-org change = %+v, want unsubscribe of w-maya with before", c)
				}
			},
		},
		{
			name:  "another worker",
			setup: mayaFollowsInbox,
			args:  map[string]any{"stream": "s-inbox", "worker": "w-maya"},
			want:  subscribeOutView{Stream: "s-inbox", Worker: "w-maya", Changed: true},
			check: func(t *testing.T, f fixture, _ subscribeOutView) { assertMembers(t, f, "s-inbox", "w-owner") },
		},
		{
			name:    "not a member",
			args:    map[string]any{"stream": "s-inbox", "worker": "w-maya"},
			wantErr: []string{`worker "w-maya" is not subscribed to "s-inbox"`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "missing stream",
			setup:   mayaFollowsInbox,
			args:    map[string]any{"worker": "w-maya"},
			wantErr: []string{"stream: is required"},
		},
	})
}

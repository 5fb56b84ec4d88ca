package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestInviteWorkers(t *testing.T) {
	type out struct {
		Stream  string   `json:"stream"`
		Added   []string `json:"added"`
		Already []string `json:"already"`
	}
	mayaFollowsInbox := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-maya"))
	}
	runTable(t, "invite_workers", []toolCase[out]{
		{
			name:  "all new",
			args:  map[string]any{"stream": "s-inbox", "workers": []string{"w-maya", "w-echo"}},
			want:  out{Stream: "s-inbox", Added: []string{"w-echo", "w-maya"}, Already: []string{}},
			check: func(t *testing.T, f fixture, _ out) { assertMembers(t, f, "s-inbox", "w-echo", "w-maya") },
		},
		{
			name:  "members already there are reported, not re-added",
			setup: mayaFollowsInbox,
			args:  map[string]any{"stream": "s-inbox", "workers": []string{"w-maya", "w-echo", "w-owner"}},
			want:  out{Stream: "s-inbox", Added: []string{"w-echo", "w-owner"}, Already: []string{"w-maya"}},
			check: func(t *testing.T, f fixture, _ out) { assertMembers(t, f, "s-inbox", "w-echo", "w-maya", "w-owner") },
		},
		{
			name:  "inviting again changes nothing",
			setup: mayaFollowsInbox,
			args:  map[string]any{"stream": "s-inbox", "workers": []string{"w-maya", "w-maya"}},
			want:  out{Stream: "s-inbox", Added: []string{}, Already: []string{"w-maya"}},
		},
		{
			name:    "missing stream",
			args:    map[string]any{"workers": []string{"w-maya"}},
			wantErr: []string{"stream: is required"},
		},
		{
			name:    "missing workers",
			args:    map[string]any{"stream": "s-inbox"},
			wantErr: []string{"workers: is required"},
		},
		{
			name:    "one unknown worker adds nobody",
			args:    map[string]any{"stream": "s-inbox", "workers": []string{"w-maya", "w-nope"}},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "unknown stream",
			args:    map[string]any{"stream": "s-nope", "workers": []string{"w-maya"}},
			wantErr: []string{`stream "s-nope": not found`},
		},
	})
}

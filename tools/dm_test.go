package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestDM(t *testing.T) {
	type out struct {
		Stream string       `json:"stream"`
		Event  domain.Event `json:"event"`
	}
	msg := func(stream, from, to, body string) out {
		return out{Stream: stream, Event: domain.Event{StreamID: stream, Source: from, SourceKind: domain.SourceHuman, CreatedAt: t0,
			Message: domain.Message{From: from, To: []string{to}, Body: body}}}
	}
	hire := func(ids ...string) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			for _, id := range ids {
				must(t)(f.env.Store.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: id, Kind: domain.WorkerHuman, PositionID: "p-support", Name: id}, nil))
			}
		}
	}
	dismiss := func(ids ...string) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			for _, id := range ids {
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": id})
			}
		}
	}
	ownerToMaya := func(t *testing.T, f fixture) {
		mustCall[any](t, f.env, "dm", map[string]any{"to": "w-maya", "body": "hi Maya"})
	}
	runTable(t, "dm", []toolCase[out]{
		{
			name: "first message creates the shared stream with both as members",
			args: map[string]any{"to": "w-maya", "body": "hi Maya"},
			want: msg("s-dm-w-maya-w-owner", "w-owner", "w-maya", "hi Maya"),
			check: func(t *testing.T, f fixture, _ out) {
				assertMembers(t, f, "s-dm-w-maya-w-owner", "w-maya", "w-owner")
			},
		},
		{
			name:   "the reply reuses the same stream",
			setup:  ownerToMaya,
			caller: "w-maya",
			args:   map[string]any{"to": "w-owner", "body": "hi back"},
			want:   msg("s-dm-w-maya-w-owner", "w-maya", "w-owner", "hi back"),
			check: func(t *testing.T, f fixture, _ out) {
				sts, err := f.env.Store.ListStreams(t.Context(), "")
				if err != nil {
					t.Fatal(err)
				}
				var dms []string
				for _, st := range sts {
					if strings.HasPrefix(st.ID, domain.DMStreamPrefix) {
						dms = append(dms, st.ID)
					}
				}
				if len(dms) != 1 {
					t.Errorf("dm streams = %v, want only s-dm-w-maya-w-owner", dms)
				}
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-dm-w-maya-w-owner"}})
				if err != nil || len(evs) != 2 {
					t.Errorf("s-dm-w-maya-w-owner holds %d events (%v), want both messages", len(evs), err)
				}
			},
		},
		{
			name:   "the stream id sorts the pair whoever sends",
			setup:  hire("w-a", "w-b"),
			caller: "w-b",
			args:   map[string]any{"to": "w-a", "body": "ping"},
			want:   msg("s-dm-w-a-w-b", "w-b", "w-a", "ping"),
		},
		{
			name: "a pair whose ids run together is refused, not let into another pair's stream",
			setup: func(t *testing.T, f fixture) {
				hire("w-a", "w-b-w-c", "w-a-w-b", "w-c")(t, f)
				mustCall[any](t, f.as("w-a-w-b"), "dm", map[string]any{"to": "w-c", "body": "secret"})
			},
			caller:  "w-a",
			args:    map[string]any{"to": "w-b-w-c", "body": "let me in"},
			wantErr: []string{`stream "s-dm-w-a-w-b-w-c" exists but is not the DM stream of w-a and w-b-w-c`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:  "a position's one worker gets a DM addressed to the position",
			setup: dismiss("w-echo"),
			args:  map[string]any{"to": "p-support", "body": "who is on support?"},
			want:  msg("s-dm-w-maya-w-owner", "w-owner", "p-support", "who is on support?"),
		},
		{
			name: "after a swap the same DM reaches the position's new worker",
			setup: func(t *testing.T, f fixture) {
				dismiss("w-echo")(t, f)
				mustCall[any](t, f.env, "dm", map[string]any{"to": "p-support", "body": "hi"})
				dismiss("w-maya")(t, f)
				hire("w-lee")(t, f)
			},
			args: map[string]any{"to": "p-support", "body": "hi"},
			want: msg("s-dm-w-lee-w-owner", "w-owner", "p-support", "hi"),
		},
		{
			name:    "a position with several workers is refused, naming them",
			args:    map[string]any{"to": "p-support", "body": "hello?"},
			wantErr: []string{"to: position p-support has 2 workers (w-echo, w-maya): message one of them"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "a position without a worker is refused",
			setup:   dismiss("w-echo", "w-maya"),
			args:    map[string]any{"to": "p-support", "body": "hello?"},
			wantErr: []string{"to: position p-support has no worker to message"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "unknown position",
			args:    map[string]any{"to": "p-nope", "body": "hello?"},
			wantErr: []string{`position "p-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "cannot message yourself",
			args:    map[string]any{"to": "w-owner", "body": "note to self"},
			wantErr: []string{"to: cannot send a direct message to yourself"},
		},
		{
			name:    "missing to",
			args:    map[string]any{"body": "hello?"},
			wantErr: []string{"to: is required"},
		},
		{
			name:    "unknown recipient",
			args:    map[string]any{"to": "w-nope", "body": "hello?"},
			wantErr: []string{`worker "w-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name: "dismissed recipient",
			setup: func(t *testing.T, f fixture) {
				mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
			},
			args:    map[string]any{"to": "w-maya", "body": "hello?"},
			wantErr: []string{`worker "w-maya" is dismissed`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing body creates no stream",
			args:    map[string]any{"to": "w-maya"},
			wantErr: []string{"body: is required"},
		},
		{
			name:    "a body over the configured limit creates no stream",
			setup:   maxBodyOf("100"),
			args:    map[string]any{"to": "w-maya", "body": strings.Repeat("x", 101)},
			wantErr: []string{"body: is 101 bytes; the limit is 100"},
		},
	}, ignoreEventID)
}

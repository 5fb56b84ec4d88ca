package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// ignoreEventID drops the random event id and the store-wide sequence
// number from comparisons; cursor tests check seq on their own.
var ignoreEventID = cmpopts.IgnoreFields(domain.Event{}, "ID", "Seq")

func maxBodyOf(n string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		t.Helper()
		if err := f.env.Store.SetSetting(t.Context(), MaxBodySetting, n); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPublish(t *testing.T) {
	runTable(t, "publish", []toolCase[domain.Event]{
		{
			name: "the whole envelope, from the caller",
			args: map[string]any{"stream": "s-inbox", "body": "hello", "subject": "greeting", "to": []string{"w-echo"},
				"threadId": "t-1", "inReplyTo": "m-0", "messageId": "m-1", "bodyContentType": "text/plain",
				"attachments": []map[string]any{{"name": "a.txt", "size": 3}}, "extra": map[string]any{"k": "v"}},
			want: domain.Event{StreamID: "s-inbox", Source: "w-owner", SourceKind: domain.SourceHuman, CreatedAt: t0,
				Message: domain.Message{From: "w-owner", To: []string{"w-echo"}, Subject: "greeting", Body: "hello", ThreadID: "t-1",
					InReplyTo: "m-0", MessageID: "m-1", BodyContentType: "text/plain",
					Attachments: []domain.Attachment{{Name: "a.txt", Size: 3}}, Extra: json.RawMessage(`{"k":"v"}`)}},
		},
		{
			name:   "an ai caller's events are marked ai",
			caller: "w-echo",
			args:   map[string]any{"stream": "s-inbox", "body": "beep"},
			want:   domain.Event{StreamID: "s-inbox", Source: "w-echo", SourceKind: domain.SourceAI, CreatedAt: t0, Message: domain.Message{From: "w-echo", Body: "beep"}},
		},
		{
			name:       "an agent run's events name the activation that caused them",
			caller:     "w-echo",
			activation: "a-123",
			args:       map[string]any{"stream": "s-inbox", "body": "done"},
			want:       domain.Event{StreamID: "s-inbox", Source: "w-echo", SourceKind: domain.SourceAI, CausedBy: "a-123", CreatedAt: t0, Message: domain.Message{From: "w-echo", Body: "done"}},
		},
		{
			name: "a webhook stream takes outbound messages",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: domain.TransportKind("webhook")}}))
			},
			args: map[string]any{"stream": "s-hook", "body": "out"},
			want: domain.Event{StreamID: "s-hook", Source: "w-owner", SourceKind: domain.SourceHuman, CreatedAt: t0, Message: domain.Message{From: "w-owner", Body: "out"}},
		},
		{
			name:  "a body exactly at the configured limit",
			setup: maxBodyOf("100"),
			args:  map[string]any{"stream": "s-inbox", "body": strings.Repeat("x", 100)},
			want:  domain.Event{StreamID: "s-inbox", Source: "w-owner", SourceKind: domain.SourceHuman, CreatedAt: t0, Message: domain.Message{From: "w-owner", Body: strings.Repeat("x", 100)}},
		},
		{
			name:    "a body over the configured limit",
			setup:   maxBodyOf("100"),
			args:    map[string]any{"stream": "s-inbox", "body": strings.Repeat("x", 101)},
			wantErr: []string{"body: is 101 bytes; the limit is 100"},
			wantIs:  domain.ErrInvalid,
		},
		{
			name:    "a body over the default limit",
			args:    map[string]any{"stream": "s-inbox", "body": strings.Repeat("x", domain.DefaultMaxBody+1)},
			wantErr: []string{"body: is 262145 bytes; the limit is 262144"},
		},
		{
			name:    "missing body",
			args:    map[string]any{"stream": "s-inbox"},
			wantErr: []string{"body: is required"},
		},
		{
			name:    "blank body",
			args:    map[string]any{"stream": "s-inbox", "body": " \n "},
			wantErr: []string{"body: is required"},
		},
		{
			name:    "attachment without a name",
			args:    map[string]any{"stream": "s-inbox", "body": "see attached", "attachments": []map[string]any{{"size": 3}}},
			wantErr: []string{"attachments[0].name: is required"},
		},
		{
			name:    "missing stream",
			args:    map[string]any{"body": "hello"},
			wantErr: []string{"stream: is required"},
		},
		{
			name:    "unknown stream",
			args:    map[string]any{"stream": "s-nope", "body": "hello"},
			wantErr: []string{`stream "s-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "the org audit trail is written only by the system",
			args:    map[string]any{"stream": "s-org", "body": "forged change"},
			wantErr: []string{"stream: s-org is the org's audit trail"},
		},
		{
			name:    "an activation log is written only by the runtime",
			args:    map[string]any{"stream": "s-activations-w-echo", "body": "forged run"},
			wantErr: []string{"stream: s-activations-w-echo is an activation log"},
		},
		{
			name: "an inbox is written only by the system",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.Notify(t.Context(), store.OwnerWorker, domain.Message{Body: "a notice"}, ""))
			},
			args:    map[string]any{"stream": "s-inbox-w-owner", "body": "forged approval"},
			wantErr: []string{"stream: s-inbox-w-owner is an inbox; only the system writes to it"},
		},
		{
			name: "a github stream only carries webhooks in",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-gh", Name: "gh",
					Transport: domain.Transport{Kind: domain.TransportKind("github"), Config: []byte(`{"repo":"a/b","events":["issues"]}`)}}))
			},
			args:    map[string]any{"stream": "s-gh", "body": "comment"},
			wantErr: []string{"stream: s-gh is a github stream"},
		},
	}, ignoreEventID)
}

package tools

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestSetContact(t *testing.T) {
	contact := domain.Stream{ID: "s-contact-w-maya", Name: "contact w-maya", Description: "messages to and from w-maya",
		Transport: domain.Transport{Kind: "email", Config: []byte(`{"alias":"w-maya"}`)}, CreatedBy: "w-owner", CreatedAt: t0}
	runTable(t, "set_contact", []toolCase[domain.Stream]{
		{
			name: "a human's email: its DMs are copied to its contact stream, addressed to it",
			args: map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			want: contact,
			check: func(t *testing.T, f fixture, _ domain.Stream) {
				dm, err := f.env.Store.EnsureDM(t.Context(), "w-echo", "w-maya")
				must(t)(dm, err)
				sent, err := f.env.Store.Append(t.Context(), domain.Event{StreamID: dm.ID, Source: "w-echo", Message: domain.Message{Body: "Can you take ticket 7?"}}, store.AppendOptions{})
				must(t)(sent, err)
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-contact-w-maya"}})
				if err != nil || len(evs) != 1 {
					t.Fatalf("contact stream holds %+v, %v; want the DM", evs, err)
				}
				m := evs[0].Message
				if m.Body != "Can you take ticket 7?" || strings.Join(m.To, ",") != "maya@example.com" || !regexp.MustCompile(`^Message from w-echo on `+dm.ID+` \[helix `+sent.ID+` t-[a-z2-7]{16}\]$`).MatchString(m.Subject) {
					t.Errorf("relayed %+v", m)
				}
			},
		},
		{
			name:   "your own",
			caller: "w-maya",
			args:   map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			want:   withCreator(contact, "w-maya"),
		},
		{
			name:    "an AI worker",
			args:    map[string]any{"worker": "w-echo", "channel": "email", "address": "echo@example.com"},
			wantErr: []string{"worker: w-echo is an AI worker; only a human worker has a contact channel"},
		},
		{
			name:    "not an address",
			args:    map[string]any{"worker": "w-maya", "channel": "email", "address": "maya at example"},
			wantErr: []string{`address: "maya at example" is not an email address`},
		},
		{
			name: "a chat: the subject heads the text, nobody is addressed",
			args: map[string]any{"worker": "w-maya", "channel": "chat", "address": "4242"},
			want: domain.Stream{ID: "s-contact-w-maya", Name: "contact w-maya", Description: "messages to and from w-maya",
				Transport: domain.Transport{Kind: "chat"}, CreatedBy: "w-owner", CreatedAt: t0},
			check: func(t *testing.T, f fixture, _ domain.Stream) {
				sent, err := f.env.Store.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: "w-echo",
					Message: domain.Message{To: []string{"w-maya"}, Subject: "Ticket 7", Body: "Can you take it?"}}, store.AppendOptions{})
				must(t)(sent, err)
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-contact-w-maya"}})
				if err != nil || len(evs) != 1 || len(evs[0].Message.To) != 0 || evs[0].Message.Body != "Ticket 7 [helix "+sent.ID+"]\n\nCan you take it?" {
					t.Errorf("contact stream holds %+v, %v; want the message, its subject heading the text", evs, err)
				}
			},
		},
		{
			name:    "a channel nobody is reached on",
			args:    map[string]any{"worker": "w-maya", "channel": "github", "address": "maya"},
			wantErr: []string{`channel: unknown contact channel "github" (valid: "email", "chat")`},
		},
		{
			name:    "a channel without an address",
			args:    map[string]any{"worker": "w-maya", "channel": "chat"},
			wantErr: []string{"address: is required: chat takes a chat id"},
		},
		{
			name:    "an address without a channel",
			args:    map[string]any{"worker": "w-maya", "address": "maya@example.com"},
			wantErr: []string{"channel: is required with an address (valid: email, chat)"},
		},
		{
			name: "none removes the channel: DMs stay in helix-org",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.SetContact(t.Context(), "w-owner", "w-maya", store.Contact{Kind: "email", Address: "maya@example.com"}))
			},
			args: map[string]any{"worker": "w-maya"},
			check: func(t *testing.T, f fixture, _ domain.Stream) {
				dm, err := f.env.Store.EnsureDM(t.Context(), "w-echo", "w-maya")
				must(t)(dm, err)
				must(t)(f.env.Store.Append(t.Context(), domain.Event{StreamID: dm.ID, Source: "w-echo", Message: domain.Message{Body: "Still there?"}}, store.AppendOptions{}))
				if evs, _ := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-contact-w-maya"}}); len(evs) != 0 {
					t.Errorf("a DM was relayed after the channel was removed: %+v", evs)
				}
			},
		},
		{
			name: "a message naming its position in `to` is relayed like one naming it",
			args: map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			want: contact,
			check: func(t *testing.T, f fixture, _ domain.Stream) {
				ask := func(to string) {
					must(t)(f.env.Store.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: "w-echo",
						Message: domain.Message{To: []string{to}, Body: "for " + to}}, store.AppendOptions{}))
				}
				ask("p-support")
				ask("p-nope")
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-contact-w-maya"}})
				if err != nil || len(evs) != 1 || evs[0].Message.Body != "for p-support" {
					t.Errorf("contact stream holds %+v, %v; want the message to p-support only", evs, err)
				}
			},
		},
		{
			name: "the stream an earlier set_contact made is used again, its events kept",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.SetContact(t.Context(), "w-maya", "w-maya", store.Contact{Kind: "chat", Address: "4242"}))
				must(t)(f.env.Store.SetContact(t.Context(), "w-owner", "w-maya", store.Contact{}))
			},
			args: map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			want: withCreator(contact, "w-maya"),
		},
		{
			// An older server let any create_stream holder make it; a
			// stream its maker reads is never where a person's DMs go.
			name: "a contact stream a peer made before the prefix was reserved is not used",
			setup: func(t *testing.T, f fixture) {
				must(t)(f.env.Store.CreateStream(t.Context(), "w-echo", domain.Stream{ID: "s-contact-w-maya", Name: "contact w-maya",
					Description: "messages to and from w-maya", Transport: domain.Transport{Kind: domain.TransportLocal}}))
			},
			args: map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			wantErr: []string{"stream s-contact-w-maya exists but was made by w-echo, not by set_contact",
				"it is left as it is, and an operator must delete or rename it (after helix-org backup) before w-maya can have a contact"},
			wantIs: domain.ErrConflict,
		},
		{
			name:    "a dismissed worker",
			setup:   func(t *testing.T, f fixture) { must(t)(f.env.Store.DismissWorker(t.Context(), "w-owner", "w-maya")) },
			args:    map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			wantErr: []string{`worker "w-maya" is dismissed`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing worker",
			args:    map[string]any{"channel": "email", "address": "maya@example.com"},
			wantErr: []string{"worker"},
		},
		{
			name:    "a worker beside you",
			setup:   func(t *testing.T, f fixture) { withLead(t, f); f.grant(t, "w-lead", "set_contact") },
			caller:  "w-lead",
			args:    map[string]any{"worker": "w-maya", "channel": "email", "address": "maya@example.com"},
			wantErr: []string{"w-lead"},
			wantIs:  domain.ErrForbidden,
		},
	}, cmpopts.IgnoreFields(domain.Stream{}, "Transport.Config"))
}

func withCreator(s domain.Stream, by string) domain.Stream { s.CreatedBy = by; return s }

//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package email_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
)

const aliasAddr = "451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com"

// senderFixture is the inbound fixture plus a fake Postmark, with the
// first message and Ada's reply to it already on s-support.
type senderFixture struct {
	fixture
	pm           *postmarktest.Server
	first, reply domain.Event
	sender       *email.Sender
}

func newSenderFixture(t *testing.T) senderFixture {
	t.Helper()
	f := senderFixture{fixture: newFixture(t, nil), pm: postmarktest.New(t, serverToken)}
	mustDo(t, f.st.SetSetting(t.Context(), email.ConfigSetting, config(f.pm.URL)))
	f.first = f.receive(t, "inbound.json")
	f.reply = f.receive(t, "reply.json")
	f.sender = email.NewSender(f.st, nil, slog.New(slog.NewTextHandler(f.logs, nil)))
	return f
}

func (f senderFixture) receive(t *testing.T, name string) domain.Event {
	t.Helper()
	m, err := email.ParseInbound(testdata(t, name))
	mustDo(t, err)
	rs, err := f.st.AppendInbound(t.Context(), []domain.Inbound{{StreamID: "s-support", Message: m.Message, Key: m.DedupKey, Contents: m.Contents}}, 0)
	mustDo(t, err)
	return rs[0].Event
}

// publish appends what w-sam publishes, as the publish tool would.
func (f senderFixture) publish(t *testing.T, m domain.Message) domain.Event {
	t.Helper()
	m.From = "w-sam"
	ev, err := f.st.Append(t.Context(), domain.Event{StreamID: "s-support", Source: "w-sam", Message: m}, store.AppendOptions{})
	mustDo(t, err)
	return ev
}

func TestSendComposesTheReply(t *testing.T) {
	type ref int // what the published message refers to
	const (
		none ref = iota
		firstEventID
		replyMessageID
		firstThread
	)
	cases := []struct {
		name string
		// msg is published; inReplyTo/threadId are filled from refer.
		msg   domain.Message
		refer ref
		want  postmarktest.Email
	}{
		{
			name: "reply by event id goes to the sender, threaded", refer: firstEventID,
			msg: domain.Message{Body: "We refunded the duplicate."},
			want: postmarktest.Email{From: "support@example.com", To: "ada@example.com", ReplyTo: aliasAddr, Subject: "Re: Invoice 1843 is wrong",
				TextBody: "We refunded the duplicate.", MessageStream: "outbound",
				Headers: []postmarktest.Header{{Name: "In-Reply-To", Value: "<CAHxX=first@mail.example.com>"}, {Name: "References", Value: "<CAHxX=first@mail.example.com>"}}},
		},
		{
			name: "reply by Message-ID honours Reply-To and extends References", refer: replyMessageID,
			msg: domain.Message{Body: "Glad to hear it."},
			want: postmarktest.Email{From: "support@example.com", To: "ada@work.example.com", ReplyTo: aliasAddr, Subject: "Re: Invoice 1843 is wrong",
				TextBody: "Glad to hear it.", MessageStream: "outbound",
				Headers: []postmarktest.Header{{Name: "In-Reply-To", Value: "<CAHxX=second@mail.example.com>"},
					{Name: "References", Value: "<CAHxX=first@mail.example.com> <reply-1@mtasv.net> <CAHxX=second@mail.example.com>"}}},
		},
		{
			name: "thread only: answers the latest inbound message of it", refer: firstThread,
			msg: domain.Message{Body: "One more thing.", Subject: "About invoice 1843", BodyContentType: "text/html"},
			want: postmarktest.Email{From: "support@example.com", To: "ada@work.example.com", ReplyTo: aliasAddr, Subject: "About invoice 1843",
				HtmlBody: "One more thing.", MessageStream: "outbound",
				Headers: []postmarktest.Header{{Name: "In-Reply-To", Value: "<CAHxX=second@mail.example.com>"},
					{Name: "References", Value: "<CAHxX=first@mail.example.com> <reply-1@mtasv.net> <CAHxX=second@mail.example.com>"}}},
		},
		{
			name: "a new conversation to an explicit address",
			msg:  domain.Message{Body: "Your order shipped.", Subject: "Order 77", To: []string{"w-owner", "bob@example.com"}},
			want: postmarktest.Email{From: "support@example.com", To: "bob@example.com", ReplyTo: aliasAddr, Subject: "Order 77",
				TextBody: "Your order shipped.", MessageStream: "outbound"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSenderFixture(t)
			m := tc.msg
			switch tc.refer {
			case firstEventID:
				m.InReplyTo = f.first.ID
			case replyMessageID:
				m.InReplyTo = f.reply.Message.MessageID
			case firstThread:
				m.ThreadID = f.first.Message.ThreadID
			}
			ev := f.publish(t, m)
			st, err := f.st.GetStream(t.Context(), "s-support")
			mustDo(t, err)
			if out := f.sender.Send(t.Context(), st, ev, 1); out.Failed() {
				t.Fatalf("Send: %+v", out)
			}
			sent := f.pm.Sent()
			if len(sent) != 1 {
				t.Fatalf("Postmark got %d emails, want 1", len(sent))
			}
			tc.want.Metadata = map[string]string{"helix_event": ev.ID, "helix_stream": "s-support"}
			if diff := cmp.Diff(tc.want, sent[0]); diff != "" {
				t.Errorf("email (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplyToOwnMessage: answering a worker's earlier message continues
// that message's thread with its customer.
func TestReplyToOwnMessage(t *testing.T) {
	f := newSenderFixture(t)
	mine := f.publish(t, domain.Message{Body: "Looking into it.", ThreadID: f.first.Message.ThreadID})
	ev := f.publish(t, domain.Message{Body: "Done.", InReplyTo: mine.ID})
	st, _ := f.st.GetStream(t.Context(), "s-support")
	if out := f.sender.Send(t.Context(), st, ev, 1); out.Failed() {
		t.Fatalf("Send: %+v", out)
	}
	if sent := f.pm.Sent(); len(sent) != 1 || sent[0].To != "ada@work.example.com" || sent[0].Header("In-Reply-To") != "<CAHxX=second@mail.example.com>" {
		t.Errorf("sent = %+v", sent)
	}
}

func TestSendOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, f senderFixture)
		msg    func(f senderFixture) domain.Message
		script []postmarktest.Reply
		want   delivery.Outcome
		// wantErr is part of the outcome's error; wantRequests how many
		// requests reached Postmark.
		wantErr      string
		wantRequests int
	}{
		{name: "nobody to send to: permanent, nothing sent",
			msg:     func(f senderFixture) domain.Message { return domain.Message{Body: "hi", To: []string{"w-owner"}} },
			want:    delivery.Outcome{Permanent: true},
			wantErr: "no recipient"},
		{name: "422 is permanent",
			script:  []postmarktest.Reply{{Status: 422, Body: `{"ErrorCode":406,"Message":"You tried to send to a recipient that has been marked as inactive."}`}},
			want:    delivery.Outcome{Status: 422, Permanent: true},
			wantErr: "inactive", wantRequests: 1},
		{name: "429 honours Retry-After",
			script:  []postmarktest.Reply{{Status: 429, Body: `{"ErrorCode":429,"Message":"Rate limit exceeded"}`, Headers: map[string]string{"Retry-After": "7"}}},
			want:    delivery.Outcome{Status: 429, RetryAfter: 7 * time.Second},
			wantErr: "429", wantRequests: 1},
		{name: "500 is retried",
			script:  []postmarktest.Reply{{Status: 500, Body: `{"ErrorCode":0,"Message":"Internal Server Error"}`}},
			want:    delivery.Outcome{Status: 500},
			wantErr: "500", wantRequests: 1},
		{name: "a wrong token is retried (the operator can fix it)",
			setup: func(t *testing.T, f senderFixture) {
				mustDo(t, f.st.SetSetting(t.Context(), email.ConfigSetting, strings.Replace(config(f.pm.URL), serverToken, "stale-token", 1)))
			},
			want:    delivery.Outcome{Status: 401},
			wantErr: "valid Server token", wantRequests: 1},
		{name: "unconfigured: retried, nothing sent",
			setup: func(t *testing.T, f senderFixture) {
				mustDo(t, f.st.DeleteSetting(t.Context(), email.ConfigSetting.Key))
			},
			wantErr: "has no server_token"},
		{name: "a redirect is not followed",
			script:  []postmarktest.Reply{{Status: 307, Headers: map[string]string{"Location": "http://127.0.0.1:1/email"}}},
			want:    delivery.Outcome{Status: 307},
			wantErr: "307", wantRequests: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSenderFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			f.pm.Script(tc.script...)
			m := domain.Message{Body: "We refunded the duplicate.", InReplyTo: f.first.ID}
			if tc.msg != nil {
				m = tc.msg(f)
			}
			ev := f.publish(t, m)
			st, _ := f.st.GetStream(t.Context(), "s-support")
			out := f.sender.Send(t.Context(), st, ev, 1)
			if out.Err == nil || !strings.Contains(out.Err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", out.Err, tc.wantErr)
			}
			for _, s := range []string{serverToken, inboundPassword} {
				if out.Err != nil && strings.Contains(out.Err.Error(), s) || strings.Contains(f.logs.String(), s) {
					t.Errorf("secret %q leaked", s)
				}
			}
			out.Err = nil
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if got := f.pm.Attempts(); got != tc.wantRequests {
				t.Errorf("Postmark saw %d requests, want %d", got, tc.wantRequests)
			}
			if len(f.pm.Sent()) != 0 {
				t.Errorf("an email was accepted: %+v", f.pm.Sent())
			}
		})
	}
}

func TestSenderKind(t *testing.T) {
	s := email.NewSender(nil, nil, nil)
	if s.Kind() != email.Kind {
		t.Errorf("Kind = %s", s.Kind())
	}
	for kind, want := range map[domain.TransportKind]bool{email.Kind: true, domain.TransportLocal: false, "webhook": false} {
		if got := s.Wants(domain.Stream{Transport: domain.Transport{Kind: kind}}); got != want {
			t.Errorf("Wants(%s) = %v, want %v", kind, got, want)
		}
	}
}

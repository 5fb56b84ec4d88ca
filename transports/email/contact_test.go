//go:build !fuzzonly

// Left out of make fuzz's binaries (-tags fuzzonly): this file reaches the
// store, whose tree would be compiled again with fuzz instrumentation.

package email_test

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// contactFixture: humans w-lee (lee@example.com) and w-kim
// (kim@example.com) on email; a message to both on s-billing, then two
// DMs from the owner to Lee, each mailed through the real sender to the
// fake Postmark; the inbound route over HTTP. The store's clock runs
// ahead by skew.
type contactFixture struct {
	fixture
	skew      *atomic.Int64
	billing   domain.Event
	dm, dm2   domain.Event
	subjects  map[string]string // "<worker> <event>" → the subject mailed
	leeAlias  string
	dmStream  string
	contactOf func(worker string) string
}

var tagged = regexp.MustCompile(`^(.*) \[helix (e-[0-9a-z]+) t-([a-z2-7]{16})\]$`)

func newContactFixture(t *testing.T) contactFixture {
	t.Helper()
	ctx := t.Context()
	skew := &atomic.Int64{}
	st := storetest.NewWith(t, store.Options{Transports: transport.List{email.Transport}.Specs(),
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	pm := postmarktest.New(t, serverToken)
	_, err := st.Bootstrap(ctx, nil)
	mustDo(t, err)
	mustDo(t, st.SetSetting(ctx, email.ConfigSetting, config(pm.URL)))
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-billing", Title: "Billing", Content: "Decide refunds."})
	mustDo(t, err)
	for _, w := range []struct{ id, name, address string }{{"w-lee", "Lee", "lee@example.com"}, {"w-kim", "Kim", "kim@example.com"}} {
		pos := "p-" + strings.TrimPrefix(w.id, "w-")
		_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: pos, RoleID: "r-billing", Title: w.name})
		mustDo(t, err)
		_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: w.id, Kind: domain.WorkerHuman, PositionID: pos, Name: w.name}, nil)
		mustDo(t, err)
		_, err = st.SetContact(ctx, store.OwnerWorker, w.id, store.Contact{Kind: string(email.Kind), Address: w.address})
		mustDo(t, err)
	}
	_, err = st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-billing", Name: "billing", Transport: domain.Transport{Kind: domain.TransportLocal}})
	mustDo(t, err)
	dm, err := st.EnsureDM(ctx, store.OwnerWorker, "w-lee")
	mustDo(t, err)
	f := contactFixture{skew: skew, subjects: map[string]string{}, dmStream: dm.ID,
		leeAlias:  "451d9b70cf9364d23ff6f9d51d870251569e+w-lee@inbound.postmarkapp.com",
		contactOf: func(w string) string { return store.ContactStreamPrefix + w }}
	appendBy := func(ev domain.Event) domain.Event {
		ev.Source = store.OwnerWorker
		out, err := st.Append(ctx, ev, store.AppendOptions{})
		mustDo(t, err)
		return out
	}
	f.billing = appendBy(domain.Event{StreamID: "s-billing", Message: domain.Message{To: []string{"w-lee", "w-kim"}, Subject: "Month end", Body: "Close the month?"}})
	f.dm2 = appendBy(domain.Event{StreamID: dm.ID, Message: domain.Message{Subject: "Order 9", Body: "Order 9 shipped."}})
	f.dm = appendBy(domain.Event{StreamID: dm.ID, Message: domain.Message{Subject: "Refund for order 7", Body: "Ada was charged twice. May I refund her?"}})

	sender := email.NewSender(st, nil, nil)
	for _, w := range []string{"w-lee", "w-kim"} {
		stream, err := st.GetStream(ctx, f.contactOf(w))
		mustDo(t, err)
		relays, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{stream.ID}})
		mustDo(t, err)
		for _, ev := range relays {
			if out := sender.Send(ctx, stream, ev, 1); out.Failed() {
				t.Fatalf("send %s to %s: %+v", ev.ID, w, out)
			}
			got, ok := pm.Next(10 * time.Second)
			if !ok {
				t.Fatalf("the fake Postmark got no email for %s", ev.ID)
			}
			m := tagged.FindStringSubmatch(got.Subject)
			if m == nil || m[2] != ev.CausedBy || got.To != strings.TrimPrefix(w, "w-")+"@example.com" ||
				got.ReplyTo != "451d9b70cf9364d23ff6f9d51d870251569e+"+w+"@inbound.postmarkapp.com" {
				t.Fatalf("relayed %s as %+v; want it to %s, Reply-To its alias, the subject tagged [helix %s t-…]", ev.CausedBy, got, w, ev.CausedBy)
			}
			f.subjects[w+" "+ev.CausedBy] = got.Subject
		}
	}
	srv := httptest.NewServer(inbound.Mux(st, nil, nil, email.Endpoint(st)))
	t.Cleanup(srv.Close)
	f.fixture = fixture{st: st, url: srv.URL}
	return f
}

// token is the token of the subject mailed to worker for event.
func (f contactFixture) token(t *testing.T, worker, event string) string {
	t.Helper()
	m := tagged.FindStringSubmatch(f.subjects[worker+" "+event])
	if m == nil {
		t.Fatalf("nothing was mailed to %s for %s", worker, event)
	}
	return m[3]
}

// reply is Postmark's documented inbound payload as an email from
// `from` to Lee's alias with subject and text; headers changes its
// authentication headers.
func (f contactFixture) reply(t *testing.T, id, from, subject, text string, headers func([]email.Header) []email.Header) []byte {
	t.Helper()
	var in email.Inbound
	mustDo(t, json.Unmarshal(testdata(t, "valid_http_post.json"), &in))
	in.From, in.FromFull = from, email.Address{Email: from}
	in.To, in.ToFull, in.OriginalRecipient, in.MailboxHash = f.leeAlias, []email.Address{{Email: f.leeAlias, MailboxHash: "w-lee"}}, f.leeAlias, "w-lee"
	in.Subject, in.TextBody, in.HtmlBody, in.MessageID, in.Attachments = subject, text, "", id, nil
	for i, h := range in.Headers {
		if h.Name == "Message-ID" {
			in.Headers[i].Value = "<" + id + "@mail.example.com>"
		}
	}
	if headers != nil {
		in.Headers = headers(in.Headers)
	}
	b, err := json.Marshal(in)
	mustDo(t, err)
	return b
}

// setHeader replaces the value of the header called name.
func setHeader(name, value string) func([]email.Header) []email.Header {
	return func(hs []email.Header) []email.Header {
		for i := range hs {
			if hs[i].Name == name {
				hs[i].Value = value
			}
		}
		return hs
	}
}

// TestEmailToAContactIsThePersonsOnlyWhenShown: what reaches Lee's
// contact address is Lee's answer on the DM only when it is from Lee's
// address and Postmark's SPF and author-aligned DKIM checks passed, or
// when it carries the token of the email it answers, mailed to Lee; any
// other message lands where it answers as an unverified message from the
// address it claims, and is not mailed back to Lee.
func TestEmailToAContactIsThePersonsOnlyWhenShown(t *testing.T) {
	const (
		lee      = "lee@example.com"
		mallory  = "mallory@example.net"
		spfFail  = "Fail (sender not authorized) identity=mailfrom; client-ip=203.0.113.9; envelope-from=lee@example.com"
		noDKIM   = "SPF_PASS"
		dkimOnly = "DKIM_SIGNED,DKIM_VALID,SPF_PASS"
	)
	type subject func(f contactFixture, t *testing.T) string
	re := func(worker string, event func(contactFixture) domain.Event) subject {
		return func(f contactFixture, t *testing.T) string { return "Re: " + f.subjects[worker+" "+event(f).ID] }
	}
	dm := func(f contactFixture) domain.Event { return f.dm }
	billing := func(f contactFixture) domain.Event { return f.billing }
	forged := func(token func(f contactFixture, t *testing.T) string) subject {
		return func(f contactFixture, t *testing.T) string {
			return "Re: Refund for order 7 [helix " + f.dm.ID + " t-" + token(f, t) + "]"
		}
	}
	cases := []struct {
		name    string
		from    string
		subject subject
		headers func([]email.Header) []email.Header
		later   time.Duration // the store's clock moves on before the reply
		// want: how the answer is Lee's ("" means it is not); on: the
		// stream it lands on.
		want string
		on   func(contactFixture) string
	}{
		{name: "Lee's reply, SPF and DKIM pass", from: lee, subject: re("w-lee", dm), want: "spf+dkim"},
		{name: "Lee's address, SPF and DKIM pass, no tag: answers the last mailed", from: lee,
			subject: func(contactFixture, *testing.T) string { return "About order 7" }, want: "spf+dkim"},
		{name: "a stranger writes to Lee's alias (their SPF and DKIM pass)", from: mallory,
			subject: func(contactFixture, *testing.T) string { return "Refund for order 7" }},
		{name: "Lee's address, SPF fails, no token", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: func(f contactFixture, t *testing.T) string { return "Re: Refund for order 7 [helix " + f.dm.ID + "]" }},
		{name: "Lee's address, DKIM missing, no token", from: lee, headers: setHeader("X-Spam-Tests", noDKIM),
			subject: func(contactFixture, *testing.T) string { return "Refund for order 7" }},
		{name: "Lee's address, DKIM_VALID without _AU, no token", from: lee, headers: setHeader("X-Spam-Tests", dkimOnly),
			subject: func(contactFixture, *testing.T) string { return "Refund for order 7" }},
		{name: "Lee's reply, SPF fails, its reply token", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: re("w-lee", dm), want: "reply-token"},
		{name: "Lee's reply, no DKIM, its reply token", from: lee, headers: setHeader("X-Spam-Tests", noDKIM),
			subject: re("w-lee", billing), want: "reply-token", on: func(contactFixture) string { return "s-billing" }},
		{name: "a stranger with Lee's reply token", from: mallory, headers: setHeader("Received-SPF", spfFail), subject: re("w-lee", dm)},
		{name: "Lee's address forged with Kim's token for the same message", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: re("w-kim", billing), on: func(contactFixture) string { return "s-billing" }},
		{name: "Lee's address forged with the token of another message", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: forged(func(f contactFixture, t *testing.T) string { return f.token(t, "w-lee", f.dm2.ID) })},
		{name: "a garbled token", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: forged(func(f contactFixture, t *testing.T) string {
				tok := []byte(f.token(t, "w-lee", f.dm.ID))
				tok[3] = map[bool]byte{true: 'b', false: 'a'}[tok[3] == 'a']
				return string(tok)
			})},
		{name: "a token cut short", from: lee, headers: setHeader("Received-SPF", spfFail),
			subject: forged(func(f contactFixture, t *testing.T) string { return f.token(t, "w-lee", f.dm.ID)[:8] })},
		{name: "an expired token", from: lee, headers: setHeader("Received-SPF", spfFail), subject: re("w-lee", dm),
			later: store.ReplyTokenTTL + time.Hour},
		{name: "a token still fresh", from: lee, headers: setHeader("Received-SPF", spfFail), subject: re("w-lee", dm),
			later: store.ReplyTokenTTL - time.Hour, want: "reply-token"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newContactFixture(t)
			f.skew.Store(int64(tc.later))
			text := "Reply " + string(rune('a'+i)) + ": yes, refund it."
			code, body := f.post(t, inboundUser, inboundPassword, f.reply(t, "reply-"+string(rune('a'+i)), tc.from, tc.subject(f, t), text, tc.headers))
			var ans inbound.Answer
			if code != 200 || json.Unmarshal([]byte(body), &ans) != nil || len(ans.Events) != 1 || ans.Events[0].Stream != f.contactOf("w-lee") {
				t.Fatalf("the reply: %d %s; want 200, stored on %s", code, body, f.contactOf("w-lee"))
			}
			on := f.dmStream
			if tc.on != nil {
				on = tc.on(f)
			}
			evs, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{on}})
			mustDo(t, err)
			var got domain.Event
			for _, ev := range evs {
				if ev.CausedBy == ans.Events[0].Event {
					got = ev
				}
				if ev.Source == "w-lee" && tc.want == "" {
					t.Errorf("%s holds a message from w-lee: %+v", on, ev.Message)
				}
			}
			var extra map[string]string
			json.Unmarshal(got.Message.Extra, &extra)
			if tc.want != "" {
				if got.Source != "w-lee" || got.SourceKind != domain.SourceHuman || got.Message.From != "w-lee" ||
					got.Message.Body != text || extra["verifiedBy"] != tc.want {
					t.Errorf("on %s: %s (%s) from %q: %q %v; want Lee's answer %q, verified by %s",
						on, got.Source, got.SourceKind, got.Message.From, got.Message.Body, extra, text, tc.want)
				}
				// The person's own words: trusted, whatever carried them in.
				if got.Label.Untrusted {
					t.Errorf("on %s: Lee's verified answer is labelled untrusted (%s)", on, got.Label.Origin)
				}
			} else {
				head := "Unverified sender " + tc.from + ", not shown to be w-lee:\n\n"
				if got.Source != "" || got.SourceKind != domain.SourceSystem || got.Message.From != tc.from ||
					got.Message.Body != head+text || extra["unverifiedSender"] != tc.from {
					t.Errorf("on %s: %q (%s) from %q: %q %v; want no source, from %s, headed %q", on, got.Source, got.SourceKind,
						got.Message.From, got.Message.Body, extra, tc.from, head)
				}
				if !got.Label.Untrusted {
					t.Errorf("on %s: the unverified message from %s is labelled trusted", on, tc.from)
				}
			}
			// Lee is not mailed what came from Lee's own address.
			mailed, err := f.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{f.contactOf("w-lee")}})
			mustDo(t, err)
			for _, ev := range mailed {
				if ev.CausedBy == got.ID {
					t.Errorf("the relayed answer went back to Lee: %+v", ev.Message)
				}
			}
		})
	}
}

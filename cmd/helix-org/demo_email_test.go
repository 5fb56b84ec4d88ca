package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
)

const (
	pmToken    = "pm-server-token-e2e-91c3"
	pmUser     = "postmark"
	pmPassword = "inbound-pass-e2e-4d2a"
	pmHash     = "451d9b70cf9364d23ff6f9d51d870251569e"
)

// TestDemoEmail is demos/email/README.md end to end through the real
// server, dispatcher, built-in agent and delivery engine, with a fake
// Postmark on loopback and the model scripted to follow Sam's and Lee's
// role files: an email wakes Sam, Sam's reply goes out threaded to the
// customer, the customer's answer comes back on the same thread and is
// answered again; a refund request is escalated to Lee, who answers the
// customer on that customer's thread.
func TestDemoEmail(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, followRoles)
	st := demoStore(t)
	ctx := t.Context()
	pm := usePostmark(t, st, "support@example.com")
	useFake(t, st, llm.Anthropic, fake)
	logs := &demoLogBuffer{}
	base, _, owner := startServe(t, st, logs)
	inbound := base + "/email/postmark"
	demoTrace(t, st, "w-sam", "w-lee")

	// README step 3: the org.
	runSetup(t, st, base, "email")
	waitIdle(t, st)

	// README step 4: the customer writes, with an attachment.
	first := postmarktest.Inbound{InboundHash: pmHash, Alias: "sam", From: "ada@example.com", FromName: "Ada Lovelace",
		Subject: "Invoice 1843 is wrong", Text: "I was charged twice for March.", PostmarkID: "b7bc2f4a-0001",
		MessageID: "<first@mail.example.com>", Attachments: map[string]string{"invoice-1843.txt": "March: 2 x 49.00"}}
	if code, body := demoPost(t, inbound, first.JSON(), nil, pmUser, pmPassword); code != 200 {
		t.Fatalf("inbound email: %d %s", code, body)
	}
	got := nextEmail(t, pm)
	want := postmarktest.Email{From: "support@example.com", To: "ada@example.com", ReplyTo: pmHash + "+sam@inbound.postmarkapp.com",
		Subject: "Re: Invoice 1843 is wrong", MessageStream: "outbound",
		Headers: []postmarktest.Header{{Name: "In-Reply-To", Value: "<first@mail.example.com>"}, {Name: "References", Value: "<first@mail.example.com>"}}}
	checkEmail(t, want, got, "You wrote: I was charged twice for March.")

	// The customer answers Sam's email (Postmark gave it a Message-ID of its own).
	second := postmarktest.Inbound{InboundHash: pmHash, Alias: "sam", From: "ada@example.com", Subject: "Re: Invoice 1843 is wrong",
		Text: "Still wrong.\n\nOn Wed, support wrote:\n> Hi, thanks for writing", Stripped: "Still wrong.", PostmarkID: "b7bc2f4a-0002",
		MessageID: "<second@mail.example.com>", InReplyTo: "<sam-1@mtasv.net>", References: "<first@mail.example.com> <sam-1@mtasv.net>"}
	if code, body := demoPost(t, inbound, second.JSON(), nil, pmUser, pmPassword); code != 200 {
		t.Fatalf("inbound reply: %d %s", code, body)
	}
	got = nextEmail(t, pm)
	want.Headers = []postmarktest.Header{{Name: "In-Reply-To", Value: "<second@mail.example.com>"},
		{Name: "References", Value: "<first@mail.example.com> <sam-1@mtasv.net> <second@mail.example.com>"}}
	checkEmail(t, want, got, "You wrote: Still wrong.")

	// One conversation on the stream: both emails on the root's thread.
	waitIdle(t, st)
	var threads []string
	var att domain.Attachment
	for _, ev := range demoEvents(t, st, "s-support") {
		if ev.Source == "" && ev.Message.From == "ada@example.com" {
			threads = append(threads, ev.Message.ThreadID)
			if len(ev.Message.Attachments) > 0 {
				att = ev.Message.Attachments[0]
			}
		}
	}
	if diff := cmp.Diff([]string{"<first@mail.example.com>", "<first@mail.example.com>"}, threads); diff != "" {
		t.Errorf("threads of the inbound emails (-want +got):\n%s", diff)
	}
	file := servertest.Call[struct {
		Text string `json:"text"`
	}](t, owner, "get_attachment", map[string]any{"ref": att.Ref})
	if att.Name != "invoice-1843.txt" || file.Text != "March: 2 x 49.00" {
		t.Errorf("attachment %+v reads %q", att, file.Text)
	}

	// README step 5: a refund request goes to Lee, who answers on its thread.
	refund := postmarktest.Inbound{InboundHash: pmHash, Alias: "sam", From: "grace@example.com", Subject: "Charged twice",
		Text: "Please refund order 7 — I paid for it twice.", PostmarkID: "b7bc2f4a-0003", MessageID: "<refund@mail.example.com>"}
	if code, body := demoPost(t, inbound, refund.JSON(), nil, pmUser, pmPassword); code != 200 {
		t.Fatalf("inbound refund request: %d %s", code, body)
	}
	toGrace := postmarktest.Email{From: "support@example.com", To: "grace@example.com", ReplyTo: pmHash + "+sam@inbound.postmarkapp.com",
		Subject: "Re: Charged twice", MessageStream: "outbound",
		Headers: []postmarktest.Header{{Name: "In-Reply-To", Value: "<refund@mail.example.com>"}, {Name: "References", Value: "<refund@mail.example.com>"}}}
	checkEmail(t, toGrace, nextEmail(t, pm), "I have passed your refund request to Lee")
	toGrace.Subject = "Your refund"
	checkEmail(t, toGrace, nextEmail(t, pm), "this is Lee from billing. I have refunded the duplicate charge")
	waitIdle(t, st)
	esc := demoEvents(t, st, "s-escalations")
	if len(esc) != 1 || esc[0].Source != "w-sam" || esc[0].Message.ThreadID != "<refund@mail.example.com>" ||
		!strings.Contains(esc[0].Message.Body, "Refund request from grace@example.com: Please refund order 7") {
		t.Errorf("s-escalations holds %+v; want Sam's one escalation on Grace's thread", esc)
	}
	if n := demoActivations(t, st, "w-lee"); n != 2 {
		t.Errorf("Lee ran %d times, want 2 (hire, the escalation)", n)
	}

	// Postmark retrying the first email changes nothing.
	acts, attempts := demoActivations(t, st, "w-sam"), pm.Attempts()
	if code, body := demoPost(t, inbound, first.JSON(), nil, pmUser, pmPassword); code != 200 || !strings.Contains(body, `"duplicate":true`) {
		t.Errorf("retried email: %d %s, want 200 duplicate", code, body)
	}
	waitIdle(t, st)
	if demoActivations(t, st, "w-sam") != acts || pm.Attempts() != attempts {
		t.Errorf("a retried email woke Sam or sent mail")
	}

	// Refused requests: the right status, nothing stored, nothing woken.
	refused := []struct {
		name       string
		body       []byte
		user, pass string
		want       int
	}{
		{"unknown alias", postmarktest.Inbound{InboundHash: pmHash, Alias: "nobody", From: "x@example.com", Text: "hi", PostmarkID: "p-3"}.JSON(), pmUser, pmPassword, 403},
		{"missing basic auth", first.JSON(), "", "", 401},
		{"wrong password", first.JSON(), pmUser, "guess", 401},
		{"malformed JSON", []byte(`{"From":`), pmUser, pmPassword, 400},
		{"oversize", []byte(`{"TextBody":"` + strings.Repeat("x", 2<<20) + `"}`), pmUser, pmPassword, 413},
	}
	if err := st.SetSetting(ctx, email.MaxBodySetting, "1048576"); err != nil {
		t.Fatal(err)
	}
	seq, _ := st.LastSeq(ctx)
	for _, r := range refused {
		code, body := demoPost(t, inbound, r.body, nil, r.user, r.pass)
		if code != r.want {
			t.Errorf("%s: %d %s, want %d", r.name, code, body, r.want)
		}
		if strings.Contains(body, pmToken) || strings.Contains(body, pmPassword) {
			t.Errorf("%s: a secret is in the answer", r.name)
		}
	}
	if after, _ := st.LastSeq(ctx); after != seq {
		t.Errorf("refused requests stored %d events", after-seq)
	}
	if n, _ := st.PendingTriggers(ctx); n != 0 || demoActivations(t, st, "w-sam") != acts {
		t.Errorf("refused requests woke someone: %d pending", n)
	}
	if strings.Contains(logs.String(), pmToken) || strings.Contains(logs.String(), pmPassword) {
		t.Error("a Postmark secret is in the server's log")
	}
}

func nextEmail(t *testing.T, pm *postmarktest.Server) postmarktest.Email {
	t.Helper()
	e, ok := pm.Next(60 * time.Second)
	if !ok {
		t.Fatal("no email reached the fake Postmark within 60s")
	}
	return e
}

// checkEmail compares everything but the body, which must contain text,
// and the metadata naming the event.
func checkEmail(t *testing.T, want, got postmarktest.Email, text string) {
	t.Helper()
	if !strings.Contains(got.TextBody, text) || got.Metadata["helix_stream"] != "s-support" {
		t.Errorf("body %q lacks %q, or metadata %v is wrong", got.TextBody, text, got.Metadata)
	}
	got.TextBody, got.Metadata = "", nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("email to the customer (-want +got):\n%s", diff)
	}
}

// usePostmark points the email transport at a fake Postmark on loopback,
// sending as from, with the built-in agent as the runtime.
func usePostmark(t *testing.T, st *store.Store, from string) *postmarktest.Server {
	t.Helper()
	pm := postmarktest.New(t, pmToken)
	cfg, _ := json.Marshal(email.Config{ServerToken: pmToken, From: from, InboundAddress: pmHash + "@inbound.postmarkapp.com",
		InboundUser: pmUser, InboundPassword: pmPassword, APIURL: pm.URL})
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{email.ConfigSetting, string(cfg)},
		// The fake Postmark listens on loopback, which outbound refuses by default.
		{safedial.AllowPrivateSetting, "true"},
		{agent.RuntimeSetting, agent.RuntimeBuiltin},
	} {
		if err := st.SetSetting(t.Context(), s.spec, s.value); err != nil {
			t.Fatal(err)
		}
	}
	return pm
}

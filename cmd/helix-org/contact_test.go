package main

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/email/postmarktest"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/telegram/telegramtest"
)

// TestHumanOnEmail: a human worker whose manager set its contact email
// receives a DM, a message naming it in `to` and an inbox notice as
// emails (fake Postmark); its emailed answer lands as its own message on the DM, in
// the thread of the message it answers.
func TestHumanOnEmail(t *testing.T) {
	t.Parallel()
	st := demoStore(t)
	pm := postmarktest.New(t, pmToken)
	cfg, _ := json.Marshal(email.Config{ServerToken: pmToken, From: "org@example.com", InboundAddress: pmHash + "@inbound.postmarkapp.com",
		InboundUser: pmUser, InboundPassword: pmPassword, APIURL: pm.URL})
	st.SetSetting(t.Context(), email.ConfigSetting, string(cfg))
	st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // the fake Postmark is on loopback
	base, _, owner := startServe(t, st, io.Discard)
	hireLee(t, owner, "email", "lee@example.com")

	// A DM reaches Lee's mailbox, Reply-To Lee's own inbound alias.
	dm := servertest.Call[struct {
		Stream string       `json:"stream"`
		Event  domain.Event `json:"event"`
	}](t, owner, "dm", map[string]any{"to": "w-lee", "subject": "Refund for order 7", "body": "Ada was charged twice. May I refund her?"})
	// Its subject tags the DM with a reply token only the server can make.
	dmMail := nextEmail(t, pm)
	if dmMail.To != "lee@example.com" || dmMail.ReplyTo != pmHash+"+w-lee@inbound.postmarkapp.com" ||
		!regexp.MustCompile(`^Refund for order 7 \[helix `+dm.Event.ID+` t-[a-z2-7]{16}\]$`).MatchString(dmMail.Subject) ||
		dmMail.TextBody != "Ada was charged twice. May I refund her?" {
		t.Errorf("the DM as email: %+v", dmMail)
	}
	// So does a message naming Lee in `to`.
	note := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-billing", "to": []string{"w-lee"}, "body": "Month end is Friday."})
	if got := nextEmail(t, pm); got.To != "lee@example.com" || !strings.Contains(got.Subject, "[helix "+note.ID+" t-") || got.TextBody != "Month end is Friday." {
		t.Errorf("the `to` message as email: %+v", got)
	}

	// And a notice in Lee's inbox (the system writes those: budget holds,
	// approvals).
	notice, err := st.Notify(t.Context(), "w-lee", domain.Message{Subject: "Budget reached", Body: "w-desk is held: its budget is spent."}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := nextEmail(t, pm); got.To != "lee@example.com" || !strings.HasPrefix(got.Subject, "Budget reached [helix "+notice.ID+" t-") {
		t.Errorf("the inbox notice as email: %+v", got)
	}

	// Lee answers the DM from the mail client, which keeps the subject's
	// token: Lee's answer even though this fake mail has no SPF or DKIM
	// verdicts.
	answer := postmarktest.Inbound{InboundHash: pmHash, Alias: "w-lee", From: "lee@example.com", Subject: "Re: " + dmMail.Subject,
		Text: "Yes, refund it.\n\nOn Mon, org wrote:\n> Ada was charged twice.", Stripped: "Yes, refund it.", PostmarkID: "lee-0001", MessageID: "<lee-1@mail.example.com>"}
	if code, body := demoPost(t, base+"/email/postmark", answer.JSON(), nil, pmUser, pmPassword); code != 200 {
		t.Fatalf("Lee's answer: %d %s", code, body)
	}
	reply := waitForReply(t, owner, dm.Stream, "w-lee", dm.Event.Seq)
	if reply.Message.Body != "Yes, refund it." || reply.Message.ThreadID != dm.Event.ID || reply.Message.InReplyTo != dm.Event.ID || reply.SourceKind != domain.SourceHuman {
		t.Errorf("Lee's answer on the DM: %+v (%s)", reply.Message, reply.SourceKind)
	}
	// A retried delivery of the same email answers once.
	demoPost(t, base+"/email/postmark", answer.JSON(), nil, pmUser, pmPassword)
	var fromLee int
	for _, ev := range demoEvents(t, st, dm.Stream) {
		if ev.Source == "w-lee" {
			fromLee++
		}
	}
	if fromLee != 1 {
		t.Errorf("Lee answered %d times on the DM, want once", fromLee)
	}

	// Someone else writes from Lee's address, without the token and
	// without SPF or DKIM verdicts: the owner reads it on the DM as an
	// unverified message, not Lee's.
	forged := postmarktest.Inbound{InboundHash: pmHash, Alias: "w-lee", From: "lee@example.com", Subject: "Re: Refund for order 7 [helix " + dm.Event.ID + "]",
		Text: "Also grant w-desk hire_worker.", PostmarkID: "forged-0001", MessageID: "<forged-1@mail.example.net>"}
	if code, body := demoPost(t, base+"/email/postmark", forged.JSON(), nil, pmUser, pmPassword); code != 200 {
		t.Fatalf("the forged email: %d %s", code, body)
	}
	unverified := waitForReply(t, owner, dm.Stream, "", reply.Seq)
	if unverified.Message.From != "lee@example.com" || unverified.SourceKind != domain.SourceSystem || unverified.Message.ThreadID != dm.Event.ID ||
		unverified.Message.Body != "Unverified sender lee@example.com, not shown to be w-lee:\n\nAlso grant w-desk hire_worker." {
		t.Errorf("the forged email on the DM: %+v (%s)", unverified.Message, unverified.SourceKind)
	}
	if n := countFrom(t, st, dm.Stream, "w-lee"); n != 1 {
		t.Errorf("Lee answered %d times on the DM, want once", n)
	}
	if n := len(demoEvents(t, st, store.ContactStreamPrefix+"w-lee")); n != 3+2 {
		t.Errorf("Lee's contact stream holds %d events, want 5: 3 mailed, Lee's answer and the forged email (neither mailed back)", n)
	}
	if n := len(pm.Sent()); n != 3 {
		t.Errorf("Postmark got %d emails, want 3 (Lee's own answer is not mailed back)", n)
	}
}

// TestHumanOnSlack: the same with a Slack channel — the DM posted in
// Lee's DM with the bot, Lee's answer there coming back on the DM.
func TestHumanOnSlack(t *testing.T) {
	t.Parallel()
	st := demoStore(t)
	sl := slacktest.New(t, slackBot)
	st.SetSetting(t.Context(), slack.ConfigSetting, `{"signing_secret":"`+slackSecret+`","bot_token":"`+slackBot+`","api_url":"`+sl.URL+`"}`)
	st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // the fake Slack is on loopback
	base, _, owner := startServe(t, st, io.Discard)
	servertest.Call[map[string]any](t, owner, "create_role", map[string]any{"id": "r-billing", "title": "Billing lead", "content": "Decide refunds."})
	servertest.Call[map[string]any](t, owner, "create_position", map[string]any{"id": "p-billing", "role": "r-billing", "title": "Billing lead"})
	servertest.Call[map[string]any](t, owner, "hire_worker", map[string]any{"id": "w-lee", "position": "p-billing", "kind": "human", "name": "Lee"})
	servertest.Call[map[string]any](t, owner, "set_contact", map[string]any{"worker": "w-lee", "channel": "slack", "address": "D0LEE"})

	dm := servertest.Call[struct {
		Stream string       `json:"stream"`
		Event  domain.Event `json:"event"`
	}](t, owner, "dm", map[string]any{"to": "w-lee", "body": "May I refund order 7?"})
	if p := sl.Next(t); p.Channel != "D0LEE" || p.Text != "Message from w-owner on "+dm.Stream+" [helix "+dm.Event.ID+"]\n\nMay I refund order 7?" {
		t.Errorf("the DM in Slack: %+v", p)
	}
	m := slacktest.Message{EventID: "Ev0LEE1", Channel: "D0LEE", User: "U0LEE", Text: "Yes, go ahead.", TS: "1712346100.000100"}
	headers := map[string]string{}
	for k, v := range slacktest.Headers(slackSecret, time.Now(), m.JSON()) {
		headers[k] = v[0]
	}
	if code, body := demoPost(t, base+"/slack/events", m.JSON(), headers, "", ""); code != 200 {
		t.Fatalf("Lee's answer: %d %s", code, body)
	}
	reply := waitForReply(t, owner, dm.Stream, "w-lee", dm.Event.Seq)
	if reply.Message.Body != "Yes, go ahead." || reply.Message.ThreadID != dm.Event.ID || reply.Message.InReplyTo != dm.Event.ID {
		t.Errorf("Lee's answer on the DM: %+v", reply.Message)
	}
}

// TestHumanOnTelegram: the same with a Telegram chat, through the real
// approval path — w-doer's held dismissal reaches its human manager
// w-lead's chat with the bot as the approval request, a DM follows it
// there, and Lead's reply to the DM in Telegram lands as its answer on the
// DM, in the DM's thread.
func TestHumanOnTelegram(t *testing.T) {
	t.Parallel()
	const secret, token, chat = "lead-Secret_1", "123456:AAE-leadleadleadleadleadlead", 90017
	script, _ := doerScript()
	st, base, _, owner := approvalOrg(t, script, "read_events")
	tg := telegramtest.New(t, token)
	st.SetSetting(t.Context(), telegram.ConfigSetting, `{"bot_token":"`+token+`","secret_token":"`+secret+`","api_url":"`+tg.URL+`"}`)
	st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // the fake Telegram is on loopback
	servertest.Call[map[string]any](t, owner, "set_contact", map[string]any{"worker": "w-lead", "channel": "telegram", "address": strconv.Itoa(chat)})
	servertest.Call[domain.Grant](t, owner, "grant_tool", map[string]any{"worker": "w-doer", "tool": "dismiss_worker", "approval": "required"})

	// w-doer is asked to dismiss w-temp; the call waits for w-lead, whose
	// chat gets the request.
	servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "dismiss w-temp"})
	ask := tg.Next(t)
	if ask.ChatID != chat || !strings.Contains(ask.Text, `w-doer asks to call dismiss_worker with {"id":"w-temp"}`) || !strings.Contains(ask.Text, "[helix e-") {
		t.Errorf("the approval request in Telegram: %+v", ask)
	}
	pending := servertest.Call[struct{ Approvals []domain.Approval }](t, owner, "list_approvals", nil).Approvals
	if len(pending) != 1 || pending[0].Approver != "w-lead" {
		t.Fatalf("pending approvals = %+v, want w-doer's, for w-lead", pending)
	}

	// A DM reaches the chat too.
	dm := servertest.Call[struct {
		Stream string       `json:"stream"`
		Event  domain.Event `json:"event"`
	}](t, owner, "dm", map[string]any{"to": "w-lead", "body": "May I refund order 7?"})
	if got := tg.Next(t); got.ChatID != chat || got.Text != "Message from w-owner on "+dm.Stream+" [helix "+dm.Event.ID+"]\n\nMay I refund order 7?" {
		t.Errorf("the DM in Telegram: %+v", got)
	}

	// Lead replies in the chat; a redelivered update answers once.
	m := telegramtest.Message{UpdateID: 5001, MessageID: 77, ChatID: chat, From: "lead", Text: "Yes, refund it.", ReplyTo: 502}
	for range 2 {
		if code, body := postTo(t, base+"/telegram/webhook", telegramtest.Headers(secret), m.JSON()); code != 200 {
			t.Fatalf("Lead's answer: %d %s", code, body)
		}
	}
	reply := waitForReply(t, owner, dm.Stream, "w-lead", dm.Event.Seq)
	if reply.Message.Body != "Yes, refund it." || reply.Message.ThreadID != dm.Event.ID || reply.Message.InReplyTo != dm.Event.ID || reply.SourceKind != domain.SourceHuman {
		t.Errorf("Lead's answer on the DM: %+v (%s)", reply.Message, reply.SourceKind)
	}
	waitIdle(t, st)
	var fromLead int
	for _, ev := range demoEvents(t, st, dm.Stream) {
		if ev.Source == "w-lead" {
			fromLead++
		}
	}
	if fromLead != 1 {
		t.Errorf("Lead answered %d times on the DM, want once", fromLead)
	}
}

// hireLee hires Lee, a human billing lead reached on channel at address,
// and creates the billing stream colleagues write to.
func hireLee(t *testing.T, owner *mcp.ClientSession, channel, address string) {
	t.Helper()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-billing", "title": "Billing lead", "content": "Decide refunds."}},
		{"create_position", map[string]any{"id": "p-billing", "role": "r-billing", "title": "Billing lead"}},
		{"hire_worker", map[string]any{"id": "w-lee", "position": "p-billing", "kind": "human", "name": "Lee"}},
		{"set_contact", map[string]any{"worker": "w-lee", "channel": channel, "address": address}},
		{"create_stream", map[string]any{"id": "s-billing", "name": "billing"}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
}

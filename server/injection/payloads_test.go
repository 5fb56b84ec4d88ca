package injection

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/slack/slacktest"
	"github.com/helixml/helix-org/transports/webhook"
)

// Inbound requests as the outside systems send them, built from payloads
// nobody here wrote (/work/shared/realworld) with only the fields a
// scenario needs changed, and signed as each system signs.

// realworld is the directory of those payloads.
var realworld = func() string {
	if d := os.Getenv("HELIX_ORG_REALWORLD"); d != "" {
		return d
	}
	return "/work/shared/realworld"
}()

var deliveries atomic.Int64

// nextID is a fresh delivery id, so every request is new to its stream.
func nextID(prefix string) string { return fmt.Sprintf("%s%d", prefix, deliveries.Add(1)) }

// readPayload decodes one of the real payloads.
func (o *org) readPayload(rel string) map[string]any {
	o.t.Helper()
	b, err := os.ReadFile(filepath.Join(realworld, rel))
	o.must(err)
	var v map[string]any
	o.must(json.Unmarshal(b, &v))
	return v
}

func (o *org) marshal(v any) []byte {
	o.t.Helper()
	b, err := json.Marshal(v)
	o.must(err)
	return b
}

// webhookEvent posts a Standard Webhooks event (the spec's example shape,
// signed with the spec's test vector secret) to a webhook stream.
func (o *org) webhookEvent(stream, text string) {
	o.t.Helper()
	body := o.marshal(map[string]any{"type": "ticket.created", "timestamp": time.Now().UTC().Format(time.RFC3339),
		"data": map[string]any{"ticket": nextID("T-"), "customer": "mallory@example.com", "text": text}})
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(hookSecret, "whsec_"))
	o.must(err)
	id, now := nextID("msg_"), time.Now().Unix()
	h := http.Header{"Content-Type": {"application/json"}, "Webhook-Id": {id}, "Webhook-Timestamp": {fmt.Sprint(now)},
		"Webhook-Signature": {webhook.Sign(key, id, now, body)}}
	o.post("/webhooks/"+stream, h, body, "", "")
}

// githubComment posts octokit's issue_comment.created example with the
// comment's body replaced, signed with the app's webhook secret.
func (o *org) githubComment(text string) {
	o.t.Helper()
	p := o.readPayload("github/payload-examples/api.github.com/issue_comment/created.payload.json")
	p["comment"].(map[string]any)["body"] = text
	body := o.marshal(p)
	h := http.Header{"Content-Type": {"application/json"}, "X-Github-Event": {"issue_comment"}, "X-Github-Delivery": {nextID("d-")},
		github.SignatureHeader: {github.Sign(githubSecret, body)}}
	o.post("/github/webhook", h, body, "", "")
}

// githubRepo is the repository of octokit's examples.
const githubRepo = "Codertocat/Hello-World"

// slackMessage posts the Slack SDK's message event sample, filled in as a
// person's message in channel, signed as Slack signs.
func (o *org) slackMessage(channel, text string) {
	o.t.Helper()
	p := o.readPayload("slack/MessagePayload.json")
	p["type"], p["event_id"], p["team_id"], p["api_app_id"] = "event_callback", nextID("Ev"), "T0ORG", "A0APP"
	ev := p["event"].(map[string]any)
	for _, k := range []string{"bot_id", "bot_profile", "blocks", "attachments", "edited", "metadata"} {
		delete(ev, k)
	}
	ts := fmt.Sprintf("1712345%03d.000100", deliveries.Add(1))
	ev["channel"], ev["user"], ev["text"], ev["ts"], ev["event_ts"], ev["thread_ts"], ev["channel_type"] = channel, "U0MALLORY", text, ts, ts, "", "channel"
	body := o.marshal(p)
	o.post("/slack/events", slacktest.Headers(slackSecret, time.Now(), body), body, "", "")
}

// email posts Postmark's documented inbound JSON as a message to alias.
func (o *org) email(alias, from, subject, text string) {
	o.t.Helper()
	p := o.readPayload("postmark/valid_http_post.json")
	to := postmarkHash + "+" + alias + "@inbound.postmarkapp.com"
	id := nextID("pm-")
	p["To"], p["OriginalRecipient"], p["MailboxHash"], p["From"], p["Subject"], p["TextBody"], p["HtmlBody"], p["MessageID"] =
		to, to, alias, from, subject, text, "", id
	p["ToFull"] = []map[string]string{{"Email": to, "Name": "", "MailboxHash": alias}}
	p["FromFull"] = map[string]string{"Email": from, "Name": "", "MailboxHash": ""}
	p["Attachments"], p["Cc"], p["CcFull"], p["Bcc"], p["BccFull"] = []any{}, "", []any{}, "", []any{}
	p["Headers"] = []map[string]string{{"Name": "Message-ID", "Value": "<" + id + "@mail.example.com>"}}
	h := http.Header{"Content-Type": {"application/json"}}
	o.post("/email/postmark", h, o.marshal(p), postmarkUser, postmarkPass)
}

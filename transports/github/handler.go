package github

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Pattern is the route the endpoint is mounted on.
const Pattern = "POST /github/webhook"

// Endpoint receives GitHub webhook deliveries: 401 for a missing or bad
// signature — a missing or malformed one before the body is read — 400
// for a payload that is not a JSON object or carries nothing, 200 for
// ping, 202 when no github stream selects the repository and event
// (nothing is stored), 200 once every matching stream has committed the
// event (all in one transaction), and 500 when they could not.
func Endpoint(st transport.Store) inbound.Endpoint {
	return inbound.Endpoint{Pattern: Pattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) { return check(st, r) }}
}

// check refuses a request without a configured secret, a well-formed
// signature or an event name before reading anything; the body's HMAC is
// computed while it is read.
func check(st transport.Store, r *http.Request) (inbound.Request, error) {
	cfg, err := setting.Load(r.Context(), st)
	if err != nil {
		return inbound.Request{}, err
	}
	if cfg.WebhookSecret == "" {
		return inbound.Request{}, inbound.Unauthorized("", "transport.github has no webhook_secret: deliveries are refused until it is set")
	}
	want, ok := ParseSignature(r.Header.Get(SignatureHeader))
	if !ok {
		return inbound.Request{}, inbound.Unauthorized("", "missing or malformed %s: want sha256= and 64 hex digits; the body was not read", SignatureHeader)
	}
	event, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	if !validEvent(event) {
		return inbound.Request{}, domain.Invalid("X-GitHub-Event", "%q is not an event name", event)
	}
	mac := hmac.New(sha256.New, []byte(cfg.WebhookSecret))
	contentType := r.Header.Get("Content-Type")
	return inbound.Request{Sum: mac, Verify: func() error { return verify(mac, want) },
		Parse: func(body []byte) (inbound.Batch, error) {
			return parse(r.Context(), st, event, delivery, formPayload(contentType, body))
		}}, nil
}

func verify(mac hash.Hash, want []byte) error {
	if !hmac.Equal(want, mac.Sum(nil)) {
		return inbound.Unauthorized("", "%s does not match the body", SignatureHeader)
	}
	return nil
}

// parse turns a delivery into one message for every github stream that
// selects its repository (case-insensitively) and event. Each stream
// stores a delivery id once, so GitHub's redelivery is a duplicate.
func parse(ctx context.Context, st transport.Store, event, delivery string, body []byte) (inbound.Batch, error) {
	if event == "ping" {
		return inbound.Batch{Reply: inbound.Answer{Events: []inbound.Stored{}, Note: "pong"}}, nil
	}
	d, err := Parse(event, delivery, body)
	if err != nil {
		return inbound.Batch{}, inbound.Malformed(err)
	}
	streams, err := st.ListStreams(ctx, Kind)
	if err != nil {
		return inbound.Batch{}, err
	}
	var b inbound.Batch
	for _, s := range streams {
		if selects(s, d.Repo, event) {
			b.Messages = append(b.Messages, domain.Inbound{StreamID: s.ID, Message: d.Message, Key: delivery, Contents: d.Contents})
		}
	}
	task, err := reviewOf(ctx, st, d, delivery)
	if err != nil {
		return inbound.Batch{}, err
	}
	b.Messages = append(b.Messages, task...)
	if len(b.Messages) == 0 {
		b.Note = fmt.Sprintf("no github stream selects %q events of repository %q; nothing stored", event, d.Repo)
	}
	return b, nil
}

// reviewOf is a review event on a pull request the server opened for a
// spec-task item, for the task's stream, waking the item's builder; none
// for any other event.
func reviewOf(ctx context.Context, st transport.Store, d Delivery, delivery string) ([]domain.Inbound, error) {
	if d.PullRequest == 0 || d.Repo == "" {
		return nil, nil
	}
	ref, err := st.PullRequestItem(ctx, string(Kind), d.Repo, d.PullRequest)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []domain.Inbound{{StreamID: domain.TaskStream(ref.Task), Message: d.Message, Key: delivery, Contents: d.Contents, Wake: &ref, Via: Kind}}, nil
}

// selects reports whether a github stream wants this repository's event.
func selects(st domain.Stream, repo, event string) bool {
	var c StreamConfig
	if repo == "" || json.Unmarshal(st.Transport.Config, &c) != nil {
		return false
	}
	return strings.EqualFold(c.Repo, repo) && slices.Contains(c.Events, event)
}

// formPayload unwraps the payload field of a webhook configured with
// content type application/x-www-form-urlencoded; the signature covers
// the raw body, so this runs after verification.
func formPayload(contentType string, body []byte) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/x-www-form-urlencoded" {
		return body
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return body
	}
	return []byte(q.Get("payload"))
}

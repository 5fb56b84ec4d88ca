package gitlab

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/transport"
)

// Pattern is the route GitLab's webhooks point at.
const Pattern = "POST /gitlab/webhook"

// The headers GitLab sends with every webhook.
const (
	HeaderToken     = "X-Gitlab-Token"
	HeaderEvent     = "X-Gitlab-Event"
	HeaderEventUUID = "X-Gitlab-Event-UUID"
	HeaderHookUUID  = "X-Gitlab-Webhook-UUID"
	// HeaderIdempotency is the same on every retry of one delivery
	// (GitLab 17.4 and later).
	HeaderIdempotency = "Idempotency-Key"
)

// MaxKey bounds the delivery id, which becomes a stored dedup key.
const MaxKey = 256

// Endpoint receives GitLab webhooks: 401 before the body is read when
// X-Gitlab-Token is missing or is no gitlab stream's secret, 400 for an
// event name GitLab does not send or a body that is not a JSON object,
// 202 when none of the streams with that secret follows the project and
// event, and 200 once each that does has the event (stored once per
// delivery id: a retry is a duplicate).
func Endpoint(st transport.Store) inbound.Endpoint {
	return inbound.Endpoint{Pattern: Pattern, Kind: Kind, MaxBody: MaxBodySetting,
		Check: func(r *http.Request) (inbound.Request, error) { return check(st, r) }}
}

func check(st transport.Store, r *http.Request) (inbound.Request, error) {
	token := r.Header.Get(HeaderToken)
	if token == "" {
		return inbound.Request{}, inbound.Unauthorized("", "missing %s header: set the webhook's secret token to its stream's secret; the body was not read", HeaderToken)
	}
	header := r.Header.Get(HeaderEvent)
	event, ok := Events[header]
	if !ok {
		return inbound.Request{}, domain.EnumError(HeaderEvent, "GitLab webhook event", trim(header), headerNames())
	}
	key := deliveryKey(r.Header)
	if len(key) > MaxKey {
		return inbound.Request{}, domain.Invalid(HeaderIdempotency, "is longer than %d characters", MaxKey)
	}
	streams, err := holding(r.Context(), st, token)
	if err != nil {
		return inbound.Request{}, err
	}
	if len(streams) == 0 {
		return inbound.Request{}, inbound.Unauthorized("", "%s is not the secret of any gitlab stream", HeaderToken)
	}
	return inbound.Request{Parse: func(body []byte) (inbound.Batch, error) {
		return parse(r.Context(), st, streams, header, event, key, body)
	}}, nil
}

// holding returns the gitlab streams whose secret is token, compared in
// constant time.
func holding(ctx context.Context, st transport.Store, token string) ([]sealed, error) {
	list, err := st.ListStreams(ctx, Kind)
	if err != nil {
		return nil, err
	}
	got := sha256.Sum256([]byte(token))
	var out []sealed
	for _, s := range list {
		open, err := st.StreamWithSecrets(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", s.ID, err)
		}
		c, err := ParseStreamConfig(open.Transport.Config)
		if err != nil {
			continue // stored before this version checked it; it cannot match
		}
		want := sha256.Sum256([]byte(c.Secret))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			out = append(out, sealed{id: s.ID, cfg: c})
		}
	}
	return out, nil
}

// sealed is a stream a request showed the secret of.
type sealed struct {
	id  string
	cfg StreamConfig
}

// deliveryKey is the id a stream stores a delivery under: Idempotency-Key,
// which GitLab repeats on each retry; else the event's UUID, which older
// versions send; else, for a sender that sends neither, nothing (each
// request is then its own delivery).
func deliveryKey(h http.Header) string {
	if k := h.Get(HeaderIdempotency); k != "" {
		return k
	}
	return h.Get(HeaderEventUUID)
}

func parse(ctx context.Context, st transport.Store, streams []sealed, header, event, key string, body []byte) (inbound.Batch, error) {
	d, err := Parse(event, body)
	if err != nil {
		return inbound.Batch{}, inbound.Malformed(err)
	}
	if key == "" {
		sum := sha256.Sum256(body)
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	d.Message.MessageID = key
	var b inbound.Batch
	for _, s := range streams {
		if s.cfg.follows(d.Project, event) {
			b.Messages = append(b.Messages, domain.Inbound{StreamID: s.id, Message: d.Message, Key: key, Contents: d.Contents})
		}
	}
	task, err := reviewOf(ctx, st, d)
	if err != nil {
		return inbound.Batch{}, err
	}
	b.Messages = append(b.Messages, task...)
	if len(b.Messages) == 0 {
		b.Note = fmt.Sprintf("no gitlab stream with this secret selects %s events (%s) of project %s; nothing stored", event, header, d.Project)
	}
	return b, nil
}

// reviewOf is a note or pipeline on a merge request the server opened
// for a spec-task item, for the task's stream, waking the item's builder;
// the item may name the project by path or by id.
func reviewOf(ctx context.Context, st transport.Store, d Delivery) ([]domain.Inbound, error) {
	if d.MergeRequest == 0 {
		return nil, nil
	}
	for _, project := range []string{d.Project.Path, strconv.FormatInt(d.Project.ID, 10)} {
		if project == "" || project == "0" {
			continue
		}
		ref, err := st.PullRequestItem(ctx, string(Kind), project, d.MergeRequest)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return []domain.Inbound{{StreamID: domain.TaskStream(ref.Task), Message: d.Message, Key: d.Message.MessageID, Contents: d.Contents, Wake: &ref, Via: Kind}}, nil
	}
	return nil, nil
}

// headerNames are the X-Gitlab-Event values the endpoint takes, sorted.
func headerNames() []string {
	names := slices.Collect(maps.Keys(Events))
	slices.Sort(names)
	return names
}

// trim keeps a header quoted in an error short.
func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

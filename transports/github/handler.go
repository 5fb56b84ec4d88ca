package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
)

// Pattern is the route the handler is mounted on.
const Pattern = "POST /github/webhook"

// Store is what the handler needs from the org's store.
type Store interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
	ListStreams(ctx context.Context, kind domain.TransportKind) ([]domain.Stream, error)
	AppendInbound(ctx context.Context, ev domain.Event, key string, contents [][]byte) (domain.Event, bool, error)
}

// Handler receives GitHub webhook deliveries.
type Handler struct {
	store Store
	log   *slog.Logger
}

// NewHandler returns the webhook handler. A nil logger discards.
func NewHandler(st Store, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{store: st, log: log.With("component", "github")}
}

// result is the body of a 2xx answer.
type result struct {
	Events     []string `json:"events"`
	Duplicates int      `json:"duplicates,omitempty"`
	Note       string   `json:"note,omitempty"`
}

// ServeHTTP answers 401 for a missing or bad signature, 413 for a body
// over transport.github.max_body_bytes, 400 for a payload that is not a
// JSON object, 200 for ping, 202 when no github stream selects the
// repository and event (nothing is stored), 200 once every matching stream
// has committed the event, and 500 when one could not.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	cfg, err := loadConfig(ctx, h.store)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	// Refused before reading: nothing to verify a body against.
	if cfg.WebhookSecret == "" {
		h.fail(w, http.StatusUnauthorized, errors.New("transport.github has no webhook_secret: deliveries are refused until it is set"))
		return
	}
	body, err := inbound.ReadBody(w, r, h.store.IntSetting(ctx, MaxBodySetting))
	if err != nil {
		h.fail(w, inbound.ReadStatus(err), err)
		return
	}
	if !VerifySignature(cfg.WebhookSecret, body, r.Header.Get(SignatureHeader)) {
		h.fail(w, http.StatusUnauthorized, errors.New("missing or invalid "+SignatureHeader))
		return
	}
	event, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	if event == "ping" {
		inbound.WriteJSON(w, http.StatusOK, result{Events: []string{}, Note: "pong"})
		return
	}
	d, err := Parse(event, delivery, formPayload(r.Header.Get("Content-Type"), body))
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	res, err := h.deliver(ctx, d, event, delivery)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	code := http.StatusOK
	if len(res.Events) == 0 {
		code = http.StatusAccepted
	}
	inbound.WriteJSON(w, code, res)
}

// deliver appends the delivery to every github stream that selects its
// repository (case-insensitively) and event. Each stream stores a delivery
// id once, so GitHub's redelivery of a partly stored delivery completes it.
func (h *Handler) deliver(ctx context.Context, d Delivery, event, delivery string) (result, error) {
	streams, err := h.store.ListStreams(ctx, domain.TransportGitHub)
	if err != nil {
		return result{}, err
	}
	res := result{Events: []string{}}
	for _, st := range streams {
		if !selects(st, d.Repo, event) {
			continue
		}
		ev, dup, err := h.store.AppendInbound(ctx, domain.Event{StreamID: st.ID, Message: d.Message}, delivery, nil)
		if err != nil {
			return result{}, err
		}
		res.Events = append(res.Events, ev.ID)
		if dup {
			res.Duplicates++
		}
		h.log.Info("github delivery stored", "delivery", delivery, "event", event, "repo", d.Repo, "stream", st.ID, "duplicate", dup)
	}
	if len(res.Events) == 0 {
		res.Note = fmt.Sprintf("no github stream selects %q events of repository %q; nothing stored", event, d.Repo)
	}
	return res, nil
}

// selects reports whether a github stream wants this repository's event.
func selects(st domain.Stream, repo, event string) bool {
	var c domain.GitHubConfig
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

func (h *Handler) fail(w http.ResponseWriter, code int, err error) {
	inbound.Fail(h.log, "github delivery", w, code, err)
}

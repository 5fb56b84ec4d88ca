package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/inbound"
)

// Store is what the inbound handler needs from the store.
type Store interface {
	GetStream(ctx context.Context, id string) (domain.Stream, error)
	Append(ctx context.Context, ev domain.Event, opts store.AppendOptions) (domain.Event, bool, error)
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
}

var _ Store = (*store.Store)(nil)

// MaxIDLength bounds webhook-id, which becomes a stored dedup key.
const MaxIDLength = 256

// HandlerOptions configure the inbound handler.
type HandlerOptions struct {
	// Now is the clock for timestamp checks; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Handler turns POST /webhooks/{streamId} into events.
type Handler struct {
	st  Store
	now func() time.Time
	log *slog.Logger
}

// NewHandler builds the inbound handler.
func NewHandler(st Store, opts HandlerOptions) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{st: st, now: opts.Now, log: opts.Logger.With("component", "webhook")}
}

// Routes are the handler's routes, for server.Config.Routes.
func (h *Handler) Routes() []server.Route {
	return []server.Route{{Pattern: "POST /webhooks/{streamId}", Handler: h}}
}

// Accepted is the answer to a stored (or already stored) webhook.
type Accepted struct {
	Event     string `json:"event"`
	Seq       int64  `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// ServeHTTP answers 202 only after the event has committed.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := h.st.GetStream(ctx, r.PathValue("streamId"))
	if err != nil {
		h.fail(w, err)
		return
	}
	ev, dedup, err := h.event(w, r, st)
	if err != nil {
		h.fail(w, err)
		return
	}
	stored, dup, err := h.st.Append(ctx, ev, store.AppendOptions{DedupKey: dedup})
	if err != nil {
		h.fail(w, err)
		return
	}
	inbound.WriteJSON(w, http.StatusAccepted, Accepted{Event: stored.ID, Seq: stored.Seq, Duplicate: dup})
}

// event reads, verifies and parses the request into the event to append
// and its dedup key (the webhook-id).
func (h *Handler) event(w http.ResponseWriter, r *http.Request, st domain.Stream) (domain.Event, string, error) {
	if st.Transport.Kind != domain.TransportWebhook {
		return domain.Event{}, "", fmt.Errorf("stream %s is a %s stream, not a webhook stream: %w", st.ID, st.Transport.Kind, domain.ErrConflict)
	}
	var cfg domain.WebhookConfig
	if err := json.Unmarshal(st.Transport.Config, &cfg); err != nil {
		return domain.Event{}, "", fmt.Errorf("stream %s config: %v", st.ID, err)
	}
	limit := h.st.IntSetting(r.Context(), MaxBodySetting)
	body, err := inbound.ReadBody(w, r, limit)
	if err != nil {
		return domain.Event{}, "", err
	}
	id := r.Header.Get(HeaderID)
	if len(id) > MaxIDLength {
		return domain.Event{}, "", domain.Invalid(HeaderID, "is longer than %d characters", MaxIDLength)
	}
	if cfg.Secret != "" {
		key, err := Key(cfg.Secret)
		if err != nil {
			return domain.Event{}, "", fmt.Errorf("stream %s: %w", st.ID, err)
		}
		if err := Verify(key, r.Header, body, h.now()); err != nil {
			return domain.Event{}, "", err
		}
	}
	msg, err := Parse(r.Header.Get("Content-Type"), body)
	if err != nil {
		return domain.Event{}, "", err
	}
	msg.MessageID = id
	if err := msg.Validate(int(limit)); err != nil {
		return domain.Event{}, "", err
	}
	return domain.Event{StreamID: st.ID, Message: msg}, id, nil
}

// fail answers an error with its status, logging only server faults.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	inbound.Fail(h.log, "inbound webhook", w, status(err), err)
}

func status(err error) int {
	switch {
	case errors.Is(err, inbound.ErrRead):
		return inbound.ReadStatus(err) // 413 over the limit, else 400
	case errors.Is(err, ErrSignature):
		return http.StatusUnauthorized
	case errors.Is(err, ErrUnsupportedBody):
		return http.StatusUnsupportedMediaType
	}
	return server.Status(err)
}

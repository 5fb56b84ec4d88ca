package email

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
)

// InboundPattern is the route Postmark's inbound webhook is pointed at.
const InboundPattern = "POST /email/postmark"

// Store is what the inbound handler needs from the org's store.
type Store interface {
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
	ListStreams(ctx context.Context, kind domain.TransportKind) ([]domain.Stream, error)
	AppendInbound(ctx context.Context, ev domain.Event, key string, contents [][]byte) (domain.Event, bool, error)
}

// Handler receives Postmark's inbound webhook.
type Handler struct {
	store Store
	log   *slog.Logger
}

// NewHandler returns the inbound handler. A nil logger discards.
func NewHandler(st Store, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{store: st, log: log.With("component", "email")}
}

// ServeHTTP answers 401 without the configured basic auth, 413 for a body
// over transport.postmark.max_body_bytes, 400 for JSON that is not
// Postmark's, 403 when no email stream has the alias (Postmark stops
// retrying on 403), 200 once the message is committed (or was already),
// and 500 when it could not be (Postmark retries).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	cfg, err := loadConfig(ctx, h.store)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	if err := authorize(cfg, r); err != nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="helix-org postmark inbound"`)
		h.fail(w, http.StatusUnauthorized, err)
		return
	}
	body, err := inbound.ReadBody(w, r, h.store.IntSetting(ctx, MaxBodySetting))
	if err != nil {
		h.fail(w, inbound.ReadStatus(err), err)
		return
	}
	m, err := ParseInbound(body)
	if err != nil {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	st, err := h.streamFor(ctx, m.Alias)
	if err != nil {
		h.fail(w, statusOf(err), err)
		return
	}
	ev, dup, err := h.store.AppendInbound(ctx, domain.Event{StreamID: st.ID, Message: m.Message}, m.DedupKey, m.Contents)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	h.log.Info("email stored", "stream", st.ID, "event", ev.ID, "postmark_message_id", m.DedupKey, "duplicate", dup)
	inbound.WriteJSON(w, http.StatusOK, map[string]any{"event": ev.ID, "duplicate": dup})
}

// authorize checks basic auth against inbound_user / inbound_password in
// constant time; with either unset, every request is refused.
func authorize(cfg Config, r *http.Request) error {
	if cfg.InboundUser == "" || cfg.InboundPassword == "" {
		return errors.New("transport.postmark has no inbound_user and inbound_password: inbound mail is refused until they are set")
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return errors.New("basic auth required")
	}
	// Hashing first makes the comparison independent of the lengths.
	u1, u2 := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(cfg.InboundUser))
	p1, p2 := sha256.Sum256([]byte(pass)), sha256.Sum256([]byte(cfg.InboundPassword))
	if subtle.ConstantTimeCompare(u1[:], u2[:])&subtle.ConstantTimeCompare(p1[:], p2[:]) != 1 {
		return errors.New("wrong basic auth credentials")
	}
	return nil
}

// errUnknownAlias is answered with 403 so Postmark stops retrying a
// message no stream will ever take.
var errUnknownAlias = errors.New("unknown alias")

// streamFor finds the email stream with the alias.
func (h *Handler) streamFor(ctx context.Context, alias string) (domain.Stream, error) {
	if alias == "" {
		return domain.Stream{}, fmt.Errorf("%w: the message was not sent to <hash>+<alias>@…", errUnknownAlias)
	}
	streams, err := h.store.ListStreams(ctx, domain.TransportEmail)
	if err != nil {
		return domain.Stream{}, err
	}
	for _, st := range streams {
		var c domain.EmailConfig
		if json.Unmarshal(st.Transport.Config, &c) == nil && c.Alias == alias {
			return st, nil
		}
	}
	return domain.Stream{}, fmt.Errorf("%w: no email stream has alias %q", errUnknownAlias, alias)
}

func statusOf(err error) int {
	if errors.Is(err, errUnknownAlias) {
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

func (h *Handler) fail(w http.ResponseWriter, code int, err error) {
	inbound.Fail(h.log, "inbound email", w, code, err)
}

package inbound

import (
	"context"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Endpoint is one inbound route of a transport. Every transport's inbound
// side has this one shape, served by Handler: Check on the headers, the
// body read under the budget and verified while read, Parse into
// messages, one store call, one answer.
type Endpoint struct {
	// Pattern is the route, e.g. "POST /webhooks/{streamId}".
	Pattern string
	// Kind names the transport in logs.
	Kind domain.TransportKind
	// MaxBody is the setting that bounds a body (413 above it); it is also
	// the body limit of the messages stored.
	MaxBody domain.SettingSpec
	// Check looks only at the request line and headers — credentials,
	// signature headers, the stream named in the path — and refuses before
	// any of the body is read.
	Check func(r *http.Request) (Request, error)
}

// Request is one request that passed Check.
type Request struct {
	// Sum, when set, is fed the body as it is read (an HMAC), and Verify
	// is called once it is all read.
	Sum    io.Writer
	Verify func() error
	// Parse turns the verified body into the messages to store.
	Parse func(body []byte) (Batch, error)
}

// Batch is what one request carries.
type Batch struct {
	Messages []domain.Inbound
	// Reply, when set, is answered as it is (200) and nothing is stored:
	// a handshake such as Slack's url_verification or GitHub's ping.
	Reply any
	// Note says why nothing was stored when Messages is empty (202).
	Note string
}

// Answer is the answer to every inbound request that stored something or
// had nothing to store: 200 with the events, 202 with a note.
type Answer struct {
	Events []Stored `json:"events"`
	Note   string   `json:"note,omitempty"`
}

// Stored is one event a request stored, or had stored before.
type Stored struct {
	Event     string `json:"event"`
	Stream    string `json:"stream"`
	Seq       int64  `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// Store is what an endpoint's handler needs of the store.
type Store interface {
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
	AppendInbound(ctx context.Context, in []domain.Inbound, maxBody int) ([]domain.Receipt, error)
}

// Handler serves the endpoint. budget is shared by every inbound handler
// (nil: each request is bounded only by MaxBody); a nil logger discards.
func (e Endpoint) Handler(st Store, budget *Budget, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &handler{e: e, st: st, budget: budget, log: log.With("component", string(e.Kind))}
}

type handler struct {
	e      Endpoint
	st     Store
	budget *Budget
	log    *slog.Logger
}

// ServeHTTP answers only once what it stores has committed: a 2xx means
// the messages are kept, anything else that the sender should retry or
// give up.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	limit := h.st.IntSetting(ctx, h.e.MaxBody)
	req, err := h.e.Check(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	body, err := h.budget.Read(w, r, limit, req.Sum)
	if err != nil {
		h.fail(w, err)
		return
	}
	// Held until the answer: what is parsed from the body lives as long.
	defer body.Release()
	if req.Verify != nil {
		if err := req.Verify(); err != nil {
			h.fail(w, err)
			return
		}
	}
	if err := checkJSON(r, body.Bytes); err != nil {
		h.fail(w, err)
		return
	}
	batch, err := req.Parse(body.Bytes)
	if err != nil {
		h.fail(w, err)
		return
	}
	if batch.Reply != nil {
		WriteJSON(w, http.StatusOK, batch.Reply)
		return
	}
	h.store(ctx, w, batch, int(limit))
}

// checkJSON refuses a JSON body that nests deeper than
// domain.MaxJSONDepth before any transport decodes it: every transport
// stores what it parses, and a body nested past the database's own limit
// would break every read of its stream.
func checkJSON(r *http.Request, body []byte) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil
	}
	return domain.CheckJSONDepth("body", body)
}

func (h *handler) store(ctx context.Context, w http.ResponseWriter, batch Batch, limit int) {
	if len(batch.Messages) == 0 {
		h.log.Info("inbound request stored nothing", "note", batch.Note)
		WriteJSON(w, http.StatusAccepted, Answer{Events: []Stored{}, Note: batch.Note})
		return
	}
	rs, err := h.st.AppendInbound(ctx, batch.Messages, limit)
	if err != nil {
		h.fail(w, err)
		return
	}
	ans := Answer{Events: make([]Stored, len(rs))}
	for i, r := range rs {
		ans.Events[i] = Stored{Event: r.Event.ID, Stream: r.Event.StreamID, Seq: r.Event.Seq, Duplicate: r.Duplicate}
		h.log.Info("inbound message stored", "stream", r.Event.StreamID, "event", r.Event.ID, "key", batch.Messages[i].Key, "duplicate", r.Duplicate)
	}
	WriteJSON(w, http.StatusOK, ans)
}

func (h *handler) fail(w http.ResponseWriter, err error) {
	Fail(h.log, "inbound "+string(h.e.Kind), w, Status(err), err)
}

// Mux serves endpoints on one mux, as the server mounts them.
func Mux(st Store, budget *Budget, log *slog.Logger, eps ...Endpoint) *http.ServeMux {
	mux := http.NewServeMux()
	for _, e := range eps {
		mux.Handle(e.Pattern, e.Handler(st, budget, log))
	}
	return mux
}

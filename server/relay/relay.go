// Package relay is the server's model relay: agents call LLM providers
// through it, authenticated by their activation's own token, and the
// server adds the real provider key (agent.api_key) and base URL on the
// way out, so no agent ever holds the key. It speaks the Anthropic
// Messages, OpenAI Chat Completions and Responses (responses.go) and
// Gemini API (gemini.go) wire formats, passes streaming
// (server-sent events) through as it arrives, passes upstream errors back
// as they came (status, Retry-After, body) so clients' retry logic works,
// and records what each call cost through Store.RecordUsage — where spend
// is counted and budgets enforced: a call over a reached budget is
// refused, and the answer to a call that reaches one is replaced by a
// "budget exceeded" error in the provider's format (budget.go).
//
// It must not import package server (server mounts it) and knows nothing
// of config keys: cmd tells it the upstream on every call.
package relay

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Upstream is the real provider: where relayed calls go and the key they carry.
type Upstream struct {
	// Provider is domain.RelayAnthropic or domain.RelayOpenAI: the only
	// wire format relayed; the other's path answers 400.
	Provider string
	// BaseURL is as agent.base_url takes it; empty means the provider's
	// public API.
	BaseURL string
	// APIKey may be empty only with a BaseURL (a keyless local server).
	APIKey string
	// Prices price each call for budgets (llm.prices); a model not in it
	// counts tokens but no money, unless DefaultPrice (llm.prices.default)
	// prices it.
	Prices       domain.Prices
	DefaultPrice *domain.Price
}

// Store is what the relay needs of the store.
type Store interface {
	VerifyToken(ctx context.Context, tok string) (store.TokenInfo, error)
	GetWorker(ctx context.Context, id string) (domain.Worker, error)
	// ReserveModelCall admits a call of an activation and holds its
	// maximum cost against the budgets over it, or refuses it with a
	// *domain.BudgetExceededError, a *domain.BudgetBusyError or an
	// invalid-model error (a money budget and no price).
	ReserveModelCall(ctx context.Context, activationID string, r store.Reservation) (string, error)
	ReleaseModelCall(ctx context.Context, hold string) error
	RenewModelCall(ctx context.Context, hold string) error
	// RecordUsage adds one model call of an activation to the ledger,
	// settles its hold and charges the budgets over it, returning the one
	// it took to its hard limit, if any.
	RecordUsage(ctx context.Context, activationID string, u store.Usage) (*domain.BudgetExceededError, error)
}

var _ Store = (*store.Store)(nil)

// DefaultMaxBodyBytes bounds a relayed request body; the Messages API's own
// limit is 32 MB.
const DefaultMaxBodyBytes = 32 << 20

// Config configures a Relay.
type Config struct {
	Store Store
	// Upstream is read on every call, so a `config set` applies at once.
	// Nil means no provider is configured.
	Upstream func(ctx context.Context) (Upstream, error)
	// Gemini is the Gemini API's upstream (Provider domain.RelayGemini),
	// read on every call like Upstream; nil means none.
	Gemini func(ctx context.Context) (Upstream, error)
	// Client calls the provider; default NewClient().
	Client       *http.Client
	MaxBodyBytes int64
	Logger       *slog.Logger
	// OnUsage, if set, hears of every recorded model call (the server's metrics).
	OnUsage func(store.Usage)
}

// Relay serves the relay's routes.
type Relay struct {
	cfg Config
	log *slog.Logger
}

// NewClient is the client the relay calls the provider with, and what
// else calls it with the key (cmd's provider embeddings): no overall
// timeout (a stream may run long; the caller's context bounds it) and no
// redirects — a redirect would carry the key, which Go does not strip
// from x-api-key, to wherever it points, so a 3xx comes back as it is.
func NewClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// New builds a Relay.
func New(cfg Config) *Relay {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Client == nil {
		cfg.Client = NewClient()
	}
	return &Relay{cfg: cfg, log: cfg.Logger.With("component", "relay")}
}

// endpoint is one relayed API path.
type endpoint struct {
	// provider is whose upstream it calls.
	provider string
	// format is its wire format, which says how its usage, errors and
	// stream ends read: a provider's name, or formatResponses.
	format string
	// path is appended to the upstream base: for Anthropic and Gemini the
	// host, for OpenAI the /v1 base.
	path string
	// metered calls generate tokens and are recorded.
	metered bool
	// model, when the path names it (Gemini), is the model asked for.
	model string
}

var endpoints = []endpoint{
	{domain.RelayAnthropic, domain.RelayAnthropic, "/v1/messages", true, ""},
	{domain.RelayAnthropic, domain.RelayAnthropic, "/v1/messages/count_tokens", false, ""},
	{domain.RelayOpenAI, domain.RelayOpenAI, "/chat/completions", true, ""},
	{domain.RelayOpenAI, formatResponses, "/responses", true, ""},
}

// Routes maps each relayed path, as a method pattern, to its handler.
func (rl *Relay) Routes() map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, e := range endpoints {
		local := domain.RelayPath + "/" + e.provider + e.path
		if e.provider == domain.RelayOpenAI {
			local = domain.RelayPath + "/" + e.provider + "/v1" + e.path
		}
		out["POST "+local] = rl.handler(e)
	}
	out["POST "+domain.RelayPath+"/"+domain.RelayGemini+"/v1beta/models/{call}"] = rl.geminiHandler()
	return out
}

// upstreamURL is where e goes on u.
func upstreamURL(u Upstream, e endpoint) string {
	base := strings.TrimRight(u.BaseURL, "/")
	switch e.provider {
	case domain.RelayAnthropic:
		if base == "" {
			base = llm.AnthropicBaseURL
		}
		// agent.base_url may or may not end in /v1, as package llm allows.
		base = strings.TrimSuffix(base, "/v1")
	case domain.RelayGemini:
		if base == "" {
			base = GeminiBaseURL
		}
		// agent.gemini.base_url may or may not end in the API version.
		base = strings.TrimSuffix(base, "/v1beta")
	default:
		if base == "" {
			base = llm.OpenAIBaseURL
		}
	}
	return base + e.path
}

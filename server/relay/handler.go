package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// forwarded are the request headers passed on; the caller's credentials
// (Authorization, x-api-key, x-goog-api-key, ?key=) never are.
var forwarded = []string{"Accept", "Anthropic-Version", "Anthropic-Beta", "Openai-Beta", "User-Agent"}

// dropped are response headers not passed back: hop-by-hop ones, and
// those that describe the upstream's encoding of a body the client gets
// decoded.
var dropped = map[string]bool{"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Upgrade": true, "Trailer": true,
	"Te": true, "Proxy-Authenticate": true, "Content-Length": true, "Content-Encoding": true, "Set-Cookie": true, "Alt-Svc": true}

func (rl *Relay) handler(e endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebound(r) {
			fail(w, e.format, http.StatusForbidden, "forbidden: invalid Host header "+r.Host+": the relay answers only the names this server is reached by")
			return
		}
		who, ok := rl.authenticate(w, r, e)
		if !ok {
			return
		}
		req, ok := rl.readRequest(w, r, e)
		if !ok {
			return
		}
		up, ok := rl.upstream(r.Context(), w, e)
		if !ok {
			return
		}
		hold := ""
		if e.metered {
			if hold, ok = rl.reserve(w, r, e.format, who, up, req); !ok {
				return
			}
			defer rl.renew(hold)()
		}
		// A call that ends without being charged gives its hold back.
		settled := false
		defer func() {
			if !settled {
				rl.release(hold)
			}
		}()
		// A model may take minutes to answer or to stream: a server-wide
		// write deadline must not cut it off.
		http.NewResponseController(w).SetWriteDeadline(time.Time{})
		resp, err := rl.send(r, e, up, req.body)
		if err != nil {
			if r.Context().Err() == nil {
				rl.log.Warn("provider unreachable", "url", upstreamURL(up, e), "err", err)
				fail(w, e.format, http.StatusBadGateway, "the model provider could not be reached: "+err.Error())
			}
			return
		}
		defer resp.Body.Close()
		if !e.metered || resp.StatusCode/100 != 2 {
			pass(w, resp)
			return
		}
		charge := func(u usage) *domain.BudgetExceededError {
			stop, ok := rl.record(r.Context(), who, up, hold, u)
			settled = ok
			return stop
		}
		if isSSE(resp.Header) {
			passStream(w, resp, e.format, req.model, charge)
		} else {
			passWhole(w, resp, e.format, req.model, charge)
		}
	})
}

// relayed is a request body as read: the bytes to send on, its model and
// the most output it asks for (0: none said).
type relayed struct {
	body      []byte
	model     string
	maxTokens int64
}

// readRequest reads the capped body, which must be a JSON object. An
// OpenAI stream is made to report its usage (stream_options.include_usage):
// without it a streamed call would cost nothing on the ledger.
func (rl *Relay) readRequest(w http.ResponseWriter, r *http.Request, e endpoint) (relayed, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rl.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fail(w, e.format, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit))
		return relayed{}, false
	}
	if err != nil {
		fail(w, e.format, http.StatusBadRequest, "read request body: "+err.Error())
		return relayed{}, false
	}
	if err := domain.CheckJSONDepth("request", body); err != nil {
		fail(w, e.format, http.StatusBadRequest, err.Error())
		return relayed{}, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		fail(w, e.format, http.StatusBadRequest, "the request body is not a JSON object")
		return relayed{}, false
	}
	req := relayed{model: e.model}
	if req.model == "" {
		json.Unmarshal(fields["model"], &req.model)
	}
	// Anthropic's max_tokens; OpenAI's max_completion_tokens, or the
	// max_tokens it replaced; the Responses API's max_output_tokens.
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		var n int64
		if json.Unmarshal(fields[k], &n) == nil && n > req.maxTokens {
			req.maxTokens = n
		}
	}
	if e.format == domain.RelayGemini {
		req.maxTokens = geminiMaxTokens(fields)
	}
	var stream bool
	json.Unmarshal(fields["stream"], &stream)
	if stream && e.format == domain.RelayOpenAI && e.metered {
		var opts map[string]json.RawMessage
		json.Unmarshal(fields["stream_options"], &opts)
		if opts == nil {
			opts = map[string]json.RawMessage{}
		}
		opts["include_usage"] = json.RawMessage("true")
		fields["stream_options"], _ = json.Marshal(opts)
		body, _ = json.Marshal(fields)
	}
	req.body = body
	return req, true
}

// upstream reads the provider config and checks this path speaks it.
func (rl *Relay) upstream(ctx context.Context, w http.ResponseWriter, e endpoint) (Upstream, bool) {
	if e.provider == domain.RelayGemini {
		return rl.geminiUpstream(ctx, w)
	}
	provider := e.format
	if rl.cfg.Upstream == nil {
		fail(w, provider, http.StatusServiceUnavailable, "this server relays no model provider")
		return Upstream{}, false
	}
	up, err := rl.cfg.Upstream(ctx)
	if err != nil {
		rl.internal(w, provider, err)
		return Upstream{}, false
	}
	if up.Provider == "" {
		up.Provider = domain.RelayAnthropic
	}
	if up.Provider != e.provider {
		fail(w, provider, http.StatusBadRequest, fmt.Sprintf("this server relays the %s wire format (agent.provider = %s); call %s instead",
			up.Provider, up.Provider, domain.RelayURL("", up.Provider)))
		return Upstream{}, false
	}
	if up.APIKey == "" && up.BaseURL == "" {
		fail(w, provider, http.StatusServiceUnavailable, "the model relay has no provider key: an operator sets agent.api_key (or agent.base_url for a keyless local server)")
		return Upstream{}, false
	}
	return up, true
}

// send makes the upstream call with the real key in place of the token.
func (rl *Relay) send(r *http.Request, e endpoint, up Upstream, body []byte) (*http.Response, error) {
	url := upstreamURL(up, e)
	query := r.URL.RawQuery
	if e.provider == domain.RelayGemini {
		query = withoutKey(r.URL.Query())
	}
	if query != "" {
		url += "?" + query
	}
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, h := range forwarded {
		if v := r.Header.Values(h); len(v) > 0 {
			out.Header[h] = v
		}
	}
	out.Header.Set("Content-Type", "application/json")
	if up.APIKey != "" {
		switch e.provider {
		case domain.RelayAnthropic:
			out.Header.Set("x-api-key", up.APIKey)
		case domain.RelayGemini:
			out.Header.Set("x-goog-api-key", up.APIKey)
		default:
			out.Header.Set("Authorization", "Bearer "+up.APIKey)
		}
	}
	return rl.cfg.Client.Do(out)
}

// pass writes the upstream's answer back as it arrives — status, headers
// and body — flushing each read of a stream.
func pass(w http.ResponseWriter, resp *http.Response) {
	writeHeader(w, resp)
	rc := http.NewResponseController(w)
	stream := isSSE(resp.Header)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the agent went away; its context ends the upstream call
			}
			if stream {
				rc.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// writeHeader passes the upstream's status and headers on.
func writeHeader(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		if !dropped[k] {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
}

func isSSE(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}

// record puts the call on the ledger, priced from prices, even when the
// agent has gone: the provider has charged for it. It returns the budget
// the call took to its hard limit, if any.
func (rl *Relay) record(ctx context.Context, who store.TokenInfo, up Upstream, hold string, u usage) (*domain.BudgetExceededError, bool) {
	if !u.seen {
		rl.log.Warn("a relayed model call reported no usage", "activation", who.ActivationID, "model", u.model)
	}
	cost, priced := up.Prices.CostOr(up.DefaultPrice, u.model, u.in, u.out)
	rec := store.Usage{Model: u.model, Input: u.in, Output: u.out, Cost: cost, Priced: priced, Reservation: hold}
	stop, err := rl.cfg.Store.RecordUsage(context.WithoutCancel(ctx), who.ActivationID, rec)
	if err != nil {
		rl.log.Error("record model usage", "activation", who.ActivationID, "err", err)
	}
	if rl.cfg.OnUsage != nil {
		rl.cfg.OnUsage(rec)
	}
	if stop != nil {
		rl.log.Info("budget exceeded: the call's answer is replaced by an error", "activation", who.ActivationID, "budget", stop.Status.Name())
	}
	return stop, err == nil
}

// rebound is domain.ReboundHost of a request: a page elsewhere, its name
// rebound to this loopback listener, must not spend the org's model budget
// with a token it found.
func rebound(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return local != nil && domain.ReboundHost(local.String(), r.Host)
}

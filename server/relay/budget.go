package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Budgets at the relay. A call of a run whose worker, trigger streams or
// org have reached a hard budget is refused before it reaches the
// provider; one that is admitted holds its maximum cost against them
// until it is settled (store/reservations.go), so parallel calls cannot
// all slip under a limit at once. A call whose own usage reaches one has its answer replaced by
// the same error — the call is still on the ledger, as the provider
// charged it — so "cut off on the third call" is exact: a whole reply is
// held until it is recorded, a stream is passed on as it arrives except
// for its tail (the events carrying the final usage and the end), which
// becomes an error event instead. Either way the agent's client library
// sees a final (4xx, never retried) provider error naming the budget.

// reserve admits a call and holds its maximum cost against the budgets
// over its run until it is settled: a reached budget refuses it (402,
// final), one whose rest calls in flight hold asks it to retry (429, which
// client libraries retry), and a money budget refuses a model without a
// price (400). The hold's id is "" when no budget applies.
func (rl *Relay) reserve(w http.ResponseWriter, r *http.Request, provider string, who store.TokenInfo, up Upstream, req relayed) (string, bool) {
	hold, err := rl.cfg.Store.ReserveModelCall(r.Context(), who.ActivationID, req.reservation(up))
	if stop, ok := errors.AsType[*domain.BudgetExceededError](err); ok {
		rl.log.Info("budget exceeded: call refused", "activation", who.ActivationID, "budget", stop.Status.Name())
		refuseBudget(w, provider, stop)
		return "", false
	}
	if busy, ok := errors.AsType[*domain.BudgetBusyError](err); ok {
		rl.log.Info("budget busy: call asked to retry", "activation", who.ActivationID, "budget", busy.Status.Name(), "calls_in_flight", busy.Calls)
		w.Header().Set("Retry-After", busyRetryAfter)
		fail(w, provider, http.StatusTooManyRequests, busy.Error())
		return "", false
	}
	if errors.Is(err, domain.ErrInvalid) {
		fail(w, provider, http.StatusBadRequest, err.Error())
		return "", false
	}
	if err != nil {
		rl.internal(w, provider, err)
		return "", false
	}
	return hold, true
}

// busyRetryAfter is the Retry-After of a call refused while others hold
// the rest of a budget: most model calls end within seconds.
const busyRetryAfter = "5"

// reservation is what req may cost at most: its max_tokens of output and
// an estimate of its input, at the model's price. Without max_tokens
// nothing bounds it, and it holds what is left of each budget.
func (req relayed) reservation(up Upstream) store.Reservation {
	in := estimateInputTokens(len(req.body))
	res := store.Reservation{Model: req.model, Tokens: in + req.maxTokens, Unbounded: req.maxTokens <= 0}
	res.Money, res.Priced = up.Prices.CostOr(up.DefaultPrice, req.model, in, req.maxTokens)
	return res
}

// estimateInputTokens bounds a request's input from its size: tokenisers
// take 3 to 4 bytes of English or code a token, so a third of the bytes
// errs high. It is only held until the call settles at what the provider
// counted.
func estimateInputTokens(bytes int) int64 { return int64(bytes+2) / 3 }

// renew keeps a hold from lapsing while its call runs; the returned
// function stops it.
func (rl *Relay) renew(hold string) func() {
	if hold == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(store.ReservationTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := rl.cfg.Store.RenewModelCall(context.Background(), hold); err != nil {
					rl.log.Warn("renew a model call's budget hold", "hold", hold, "err", err)
				}
			}
		}
	}()
	return func() { close(done) }
}

// release gives a hold back when its call charged nothing.
func (rl *Relay) release(hold string) {
	if err := rl.cfg.Store.ReleaseModelCall(context.Background(), hold); err != nil {
		rl.log.Warn("release a model call's budget hold; it lapses by itself", "hold", hold, "err", err)
	}
}

// budgetError is the provider's error object for a budget stop: 402 with
// Anthropic's billing_error, or OpenAI's insufficient_quota with the code
// budget_exceeded.
func budgetError(provider string, stop *domain.BudgetExceededError) map[string]any {
	switch provider {
	case domain.RelayAnthropic:
		return map[string]any{"type": "error", "error": map[string]any{"type": "billing_error", "message": stop.Error()}}
	case domain.RelayGemini:
		return geminiError(http.StatusPaymentRequired, stop.Error())
	}
	return map[string]any{"error": map[string]any{"message": stop.Error(), "type": "insufficient_quota", "code": "budget_exceeded"}}
}

func refuseBudget(w http.ResponseWriter, provider string, stop *domain.BudgetExceededError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	json.NewEncoder(w).Encode(budgetError(provider, stop))
}

// budgetEvent is the budget error as a stream's last event.
func budgetEvent(provider string, stop *domain.BudgetExceededError) []byte {
	if provider == formatResponses {
		return responsesBudgetEvent(stop)
	}
	data, _ := json.Marshal(budgetError(provider, stop))
	if provider == domain.RelayAnthropic {
		return append(append([]byte("event: error\ndata: "), data...), "\n\n"...)
	}
	return append(append([]byte("data: "), data...), "\n\n"...)
}

// passWhole reads a whole (non-stream) reply, charges it, and passes it
// on — or, when it reached a hard budget, the budget error instead. A
// reply too large to meter is passed on as it comes.
func passWhole(w http.ResponseWriter, resp *http.Response, provider, model string, charge func(usage) *domain.BudgetExceededError) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMeteredBody+1))
	m := newMeter(provider, false)
	m.Write(body)
	if err != nil || len(body) > maxMeteredBody {
		writeHeader(w, resp)
		w.Write(body)
		io.Copy(w, resp.Body)
		charge(m.usage(model))
		return
	}
	if stop := charge(m.usage(model)); stop != nil {
		refuseBudget(w, provider, stop)
		return
	}
	writeHeader(w, resp)
	w.Write(body)
}

// passStream passes a stream on event by event, holding back its tail
// until the call is charged.
func passStream(w http.ResponseWriter, resp *http.Response, provider, model string, charge func(usage) *domain.BudgetExceededError) {
	writeHeader(w, resp)
	s := &streamer{w: w, rc: http.NewResponseController(w), provider: provider, m: newMeter(provider, true)}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	midLine := false
	for {
		chunk, err := br.ReadSlice('\n')
		s.m.Write(chunk)
		s.ev = append(s.ev, chunk...)
		full := err == nil
		switch {
		case full && !midLine && len(bytes.TrimRight(chunk, "\r\n")) == 0, err != nil && !errors.Is(err, bufio.ErrBufferFull):
			s.event()
		case len(s.ev) > maxEventLine:
			s.spill()
		}
		midLine = !full
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	if stop := charge(s.m.usage(model)); stop != nil {
		s.write(budgetEvent(provider, stop))
		return
	}
	s.write(s.held)
}

// streamer is a stream on its way through.
type streamer struct {
	w        io.Writer
	rc       *http.ResponseController
	provider string
	m        *meter

	ev      []byte // the event being read
	spilled bool   // the start of ev was over-long and has gone on
	held    []byte // the tail, held back
	holding bool
	gone    bool // the agent went away
}

// event ends one event: passed on, or held once the tail has begun.
func (s *streamer) event() {
	ev := s.ev
	s.ev = nil
	switch {
	case s.spilled:
		s.spilled = false
		s.write(ev)
	case s.holding || endsReply(s.provider, ev):
		s.holding = true
		s.held = append(s.held, ev...)
		if len(s.held) > maxMeteredBody {
			// A tail this large is no usage event: give up holding.
			s.write(s.held)
			s.held, s.holding = nil, false
		}
	default:
		s.write(ev)
	}
}

// spill passes on the start of an over-long event (usage events are
// small, so it is never the tail's) instead of buffering it whole.
func (s *streamer) spill() {
	if s.holding {
		return
	}
	s.write(s.ev)
	s.ev, s.spilled = nil, true
}

func (s *streamer) write(b []byte) {
	if s.gone || len(b) == 0 {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.gone = true // its context ends the upstream call
		return
	}
	s.rc.Flush()
}

// endsReply says whether an event begins a stream's tail: Anthropic's
// message_delta (the final usage) and message_stop; OpenAI's chunk with a
// usage and [DONE]; the Responses API's terminal events; Gemini's chunk
// with a finish reason.
func endsReply(provider string, ev []byte) bool {
	for _, l := range bytes.Split(ev, []byte("\n")) {
		l = bytes.TrimRight(l, "\r")
		if name, ok := bytes.CutPrefix(l, []byte("event:")); ok {
			if n := string(bytes.TrimSpace(name)); n == "message_delta" || n == "message_stop" {
				return true
			}
			continue
		}
		data, ok := bytes.CutPrefix(l, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		var e struct {
			Type  string          `json:"type"`
			Usage json.RawMessage `json:"usage"`
		}
		json.Unmarshal(data, &e)
		if provider == domain.RelayAnthropic && (e.Type == "message_delta" || e.Type == "message_stop") {
			return true
		}
		if provider == domain.RelayOpenAI && (string(data) == "[DONE]" || len(e.Usage) > 0 && string(e.Usage) != "null") {
			return true
		}
		if provider == formatResponses && responsesEnds(e.Type) || provider == domain.RelayGemini && geminiEnds(data) {
			return true
		}
	}
	return false
}

package relay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestRelayBudgetHoldsUnderConcurrency: 50 calls at once, split over two
// servers sharing one database, against a hard budget of tokens or of
// money. Each call holds its maximum cost before it is forwarded, and the
// provider answers none until every call has either reached it or been
// answered, so nothing settles early: together they pass the limit by at
// most one call's hold, and the rest are asked to retry (429 with
// Retry-After) without reaching the provider. Afterwards every call that
// reached the provider is on the ledger and no hold is left: the next call
// is admitted.
func TestRelayBudgetHoldsUnderConcurrency(t *testing.T) {
	const n = 50
	prices := domain.Prices{"m-asked": {Input: 3, Output: 15}}
	body := request(llm.Anthropic, false) // max_tokens 50
	holdIn := int64(len(body)+2) / 3      // the relay's estimate of the input
	holdCost, _ := prices.Cost("m-asked", holdIn, 50)
	tests := []struct {
		name  string
		limit domain.Limit
		// spent is a measure of the ledger, over returns whether it passed
		// the limit by more than one hold.
		spent func([]domain.ModelCall) int64
		over  int64
	}{
		{"tokens", domain.Limit{Tokens: 3000}, func(mc []domain.ModelCall) (n int64) {
			for _, c := range mc {
				n += c.InputTokens + c.OutputTokens
			}
			return n
		}, 3000 + holdIn + 50},
		{"usd", domain.Limit{Money: domain.USD(0.03)}, func(mc []domain.ModelCall) (n int64) {
			for _, c := range mc {
				n += int64(c.Cost)
			}
			return n
		}, int64(domain.USD(0.03) + holdCost)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
				return llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 20, OutputTokens: int64(turn.MaxTokens)}}
			}).WantKey(realKey)
			g := newGate(t, fake.BaseURL())
			up := relay.Upstream{Provider: llm.Anthropic, BaseURL: g.url, APIKey: realKey, Prices: prices}
			hs := sharingServers(t, 2, server.Config{Upstream: func(context.Context) (relay.Upstream, error) { return up, nil }})
			st := hs[0].Store
			tok := activation(t, st, "w-bot", "a-1")
			if _, err := st.SetBudget(t.Context(), store.OwnerWorker, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetTotal, Hard: tt.limit}); err != nil {
				t.Fatal(err)
			}

			statuses := make([]int, n)
			answers := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					req, _ := http.NewRequest(http.MethodPost, org{h: hs[i%len(hs)]}.url(llm.Anthropic)+"/v1/messages", strings.NewReader(body))
					req.Header.Set("x-api-key", tok)
					req.Header.Set("anthropic-version", llm.AnthropicVersion)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						g.events <- struct{}{}
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					statuses[i], answers[i] = resp.StatusCode, resp.Header.Get("Retry-After")+" "+string(b)
					if resp.StatusCode != http.StatusOK {
						g.events <- struct{}{} // refused without reaching the provider
					}
				})
			}
			for range n {
				select {
				case <-g.events:
				case <-time.After(30 * time.Second):
					t.Fatal("the calls neither reached the provider nor were answered within 30s")
				}
			}
			close(g.release)
			wg.Wait()

			ok := 0
			for i, s := range statuses {
				switch {
				case s == http.StatusOK:
					ok++
				case s != http.StatusTooManyRequests || !strings.HasPrefix(answers[i], "5 ") || !strings.Contains(answers[i], "budget busy: worker w-bot's total budget of "):
					t.Errorf("call %d: %d %s, want 200 or a 429 saying the budget is busy, Retry-After 5", i, s, answers[i])
				}
			}
			mc := calls(t, st, ok)
			if len(mc) != ok || len(fake.Turns()) != ok {
				t.Errorf("%d calls answered 200, the ledger holds %d, the provider saw %d", ok, len(mc), len(fake.Turns()))
			}
			if spent := tt.spent(mc); spent > tt.over || ok < 2 {
				t.Errorf("%d of %d calls went through and spent %d; want several, spending at most %d (the limit and one call's hold)", ok, n, spent, tt.over)
			}
			t.Logf("%d of %d calls admitted", ok, n)
			// Every hold was settled: the next call is admitted and answered.
			resp := org{h: hs[1]}.post(t, llm.Anthropic, body, authHeader(llm.Anthropic, tok))
			if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
				t.Errorf("a call after the burst: %d %s", resp.StatusCode, b)
			}
		})
	}
}

// gate stands between the relay and the fake provider: it holds every
// call until release is closed, and counts each one on events as it
// arrives.
type gate struct {
	url     string
	events  chan struct{}
	release chan struct{}
}

func newGate(t *testing.T, provider string) *gate {
	t.Helper()
	target, err := url.Parse(provider)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{events: make(chan struct{}, 1000), release: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.events <- struct{}{}
		<-g.release
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// sharingServers starts n servers on one database, as several
// `helix-org serve` share one PostgreSQL (or, here on SQLite, one file).
func sharingServers(t *testing.T, n int, cfg server.Config) []*servertest.Harness {
	t.Helper()
	db := storetest.DB(t)
	opts := store.Options{Transports: servertest.Transports, Synchronous: "NORMAL", KeyFile: filepath.Join(t.TempDir(), "org.key")}
	var out []*servertest.Harness
	for range n {
		st, err := store.Open(t.Context(), db, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out = append(out, servertest.StartWith(t, st, cfg))
	}
	return out
}

// TestRelayUnpricedModel: a model llm.prices does not list is refused
// (400, naming llm.prices) while a money budget covers the caller, since
// what it costs could not be held against the budget; llm.prices.default
// prices it instead, and a budget of tokens alone takes it.
func TestRelayUnpricedModel(t *testing.T) {
	def := &domain.Price{Input: 10, Output: 50}
	tests := []struct {
		name     string
		limit    domain.Limit
		def      *domain.Price
		want     int
		msg      string
		wantCost domain.Money
	}{
		{"money budget", domain.Limit{Money: domain.USD(5)}, nil, 400,
			`"message":"model: \"m-asked\" has no price in llm.prices, and worker w-bot's total budget limits money ($5.00): a call's cost must be known to hold it against the budget. An operator adds the model to llm.prices or sets llm.prices.default"`, 0},
		{"money budget and llm.prices.default", domain.Limit{Money: domain.USD(5)}, def, 200, `"text":"ok"`, domain.USD((300*10 + 100*50) / 1e6)},
		{"token budget", domain.Limit{Tokens: 5000}, nil, 200, `"text":"ok"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.New(t, llm.Anthropic, func(llmtest.Turn) llmtest.Reply {
				return llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 300, OutputTokens: 100}}
			}).WantKey(realKey)
			up := relay.Upstream{Provider: llm.Anthropic, BaseURL: fake.BaseURL(), APIKey: realKey, Prices: domain.Prices{"m-other": {Input: 1, Output: 1}}, DefaultPrice: tt.def}
			o := org{h: servertest.Start(t, server.Config{Upstream: func(context.Context) (relay.Upstream, error) { return up, nil }}), fake: fake}
			o.tok = activation(t, o.h.Store, "w-bot", "a-1")
			if _, err := o.h.Store.SetBudget(t.Context(), store.OwnerWorker, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetTotal, Hard: tt.limit}); err != nil {
				t.Fatal(err)
			}
			resp := o.post(t, llm.Anthropic, request(llm.Anthropic, false), authHeader(llm.Anthropic, o.tok))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.msg) {
				t.Fatalf("%d %s, want %d with %s", resp.StatusCode, body, tt.want, tt.msg)
			}
			if tt.want != 200 {
				if n := len(fake.Turns()); n != 0 {
					t.Errorf("the provider saw %d calls", n)
				}
				return
			}
			if mc := calls(t, o.h.Store, 1); mc[0].Cost != tt.wantCost || mc[0].Priced != (tt.def != nil) {
				t.Errorf("ledger = %+v, want cost %s", mc[0], tt.wantCost)
			}
		})
	}
}

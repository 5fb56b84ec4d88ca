package relay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// budgeted is a relay whose fake provider reports 300 input and 100
// output tokens a call of m-asked, priced at $3 and $15 per million, and
// w-bot's run a-1 under a 1,000-token total budget.
func budgeted(t *testing.T, format string) org {
	t.Helper()
	fake := llmtest.New(t, format, func(llmtest.Turn) llmtest.Reply {
		return llmtest.Reply{Text: "spent", Usage: llm.Usage{InputTokens: 300, OutputTokens: 100}}
	}).WantKey(realKey)
	up := relay.Upstream{Provider: format, BaseURL: fake.BaseURL(), APIKey: realKey, Prices: domain.Prices{"m-asked": {Input: 3, Output: 15}}}
	h := servertest.Start(t, server.Config{Upstream: func(context.Context) (relay.Upstream, error) { return up, nil }})
	o := org{h: h, fake: fake, tok: activation(t, h.Store, "w-bot", "a-1")}
	if _, err := h.Store.SetBudget(t.Context(), store.OwnerWorker, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetTotal, Hard: domain.Limit{Tokens: 1000}}); err != nil {
		t.Fatal(err)
	}
	return o
}

const wantStop = "budget exceeded: worker w-bot's total budget of 1,000 tokens is used up: 1,200 tokens and $0.0072 spent in total by the calls of w-bot. " +
	"No more model calls or runs for it until the limit is raised: w-owner can raise it with set_budget."

// TestRelayBudgetCutsOffTheThirdCall: with 400 tokens a call and a
// 1,000-token budget, the third call's answer is replaced by a final 402
// in the provider's format naming the budget — the call is on the ledger
// at its price — and a fourth never reaches the provider.
func TestRelayBudgetCutsOffTheThirdCall(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := budgeted(t, format)
			p, err := llm.New(llm.Config{Provider: format, Model: "m-asked", BaseURL: o.url(format), APIKey: o.tok, Retry: llm.Retry{Attempts: 3}})
			if err != nil {
				t.Fatal(err)
			}
			complete := func() error {
				_, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, MaxTokens: 50})
				return err
			}
			for i := 1; i <= 2; i++ {
				if err := complete(); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			for i := 3; i <= 4; i++ {
				var se *llm.StatusError
				if err := complete(); !errors.As(err, &se) || se.Status != http.StatusPaymentRequired || se.Message != wantStop {
					t.Errorf("call %d: %v; want a 402 saying %q", i, err, wantStop)
				}
			}
			if n := len(o.fake.Turns()); n != 3 {
				t.Errorf("the provider saw %d calls, want 3: the refused fourth never left", n)
			}
			mc := calls(t, o.h.Store, 3)
			if len(mc) != 3 || mc[2].InputTokens != 300 || mc[2].Cost != domain.USD(0.0024) || !mc[2].Priced {
				t.Errorf("ledger = %+v, want 3 priced calls of $0.0024", mc)
			}
			if stop, _ := o.h.Store.BudgetStop(t.Context(), "a-1"); stop != wantStop {
				t.Errorf("budget stop of a-1 = %q", stop)
			}
		})
	}
}

// TestRelayBudgetEndsAStream: a streamed call that reaches the budget
// reaches the agent as it comes, but its tail — the final usage and the
// end — is replaced by a provider-format error event.
func TestRelayBudgetEndsAStream(t *testing.T) {
	ends := map[string]struct{ end, err string }{
		llm.Anthropic: {"event: message_stop", "event: error\ndata: {\"error\":{\"message\":\"" + wantStop + "\",\"type\":\"billing_error\"},\"type\":\"error\"}\n\n"},
		llm.OpenAI:    {"data: [DONE]", "data: {\"error\":{\"code\":\"budget_exceeded\",\"message\":\"" + wantStop + "\",\"type\":\"insufficient_quota\"}}\n\n"},
	}
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := budgeted(t, format)
			stream := func() string {
				resp := o.post(t, format, request(format, true), authHeader(format, o.tok))
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("stream answered %d: %s", resp.StatusCode, body)
				}
				return string(body)
			}
			for i := 1; i <= 2; i++ {
				if body := stream(); !strings.Contains(body, ends[format].end) || strings.Contains(body, "budget") {
					t.Errorf("stream %d under the budget:\n%s", i, body)
				}
			}
			body := stream()
			if !strings.Contains(body, "spent") || strings.Contains(body, ends[format].end) || !strings.HasSuffix(body, ends[format].err) {
				t.Errorf("the third stream should carry the reply, then end with the budget error instead of %q:\n%s", ends[format].end, body)
			}
			resp := o.post(t, format, request(format, true), authHeader(format, o.tok))
			if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(string(b), wantStop) {
				t.Errorf("a fourth call: %d %s, want a 402 refusal", resp.StatusCode, b)
			}
			if mc := calls(t, o.h.Store, 3); len(mc) != 3 || len(o.fake.Turns()) != 3 {
				t.Errorf("ledger holds %d calls, the provider saw %d; want 3 and 3", len(mc), len(o.fake.Turns()))
			}
		})
	}
}

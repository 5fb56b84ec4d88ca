package relay_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
)

// realKey is the provider key only the server holds.
const realKey = "sk-real-provider-key-9c1e"

var formats = []string{llm.Anthropic, llm.OpenAI}

// org is a real server, relaying to a fake provider, with one AI worker
// whose activation a-1 is running and holds tok.
type org struct {
	h    *servertest.Harness
	fake *llmtest.Server
	tok  string
}

func newOrg(t *testing.T, format string, script llmtest.Script) org {
	t.Helper()
	fake := llmtest.New(t, format, script).WantKey(realKey)
	up := relay.Upstream{Provider: format, BaseURL: fake.BaseURL(), APIKey: realKey}
	h := servertest.Start(t, server.Config{Upstream: func(context.Context) (relay.Upstream, error) { return up, nil }})
	return org{h: h, fake: fake, tok: activation(t, h.Store, "w-bot", "a-1")}
}

// activation hires an AI worker and claims its hire trigger, as the
// dispatcher does, returning the run's token.
func activation(t *testing.T, st *store.Store, worker, id string) string {
	t.Helper()
	ctx := t.Context()
	st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-bot", Title: "Bot", Content: "x"})
	st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-bot", RoleID: "r-bot", Title: "Bot"})
	if _, err := st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: worker, Kind: domain.WorkerAI, PositionID: "p-bot", Name: worker}, nil); err != nil {
		t.Fatal(err)
	}
	_, _, tok, err := st.Claim(ctx, worker, id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (o org) url(format string) string { return domain.RelayURL(o.h.Server.URL, format) }

// post sends a raw request to the relay path of format.
func (o org) post(t *testing.T, format, body string, header map[string]string) *http.Response {
	t.Helper()
	path := "/v1/messages"
	if format == llm.OpenAI {
		path = "/chat/completions"
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, o.url(format)+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", llm.AnthropicVersion)
	for k, v := range header {
		if k == "Host" {
			req.Host = v // Go sends req.Host, not a Host header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// request is a minimal valid body; stream asks for server-sent events.
func request(format string, stream bool) string {
	if format == llm.Anthropic {
		return fmt.Sprintf(`{"model":"m-asked","max_tokens":50,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
	}
	return fmt.Sprintf(`{"model":"m-asked","stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
}

// authHeader is how each SDK sends its key: Anthropic's x-api-key, OpenAI's bearer.
func authHeader(format, tok string) map[string]string {
	if format == llm.Anthropic {
		return map[string]string{"x-api-key": tok}
	}
	return map[string]string{"Authorization": "Bearer " + tok}
}

// calls waits for a-1's ledger to hold n calls (the relay records a call
// once its answer has been written) and returns them.
func calls(t *testing.T, st *store.Store, n int) []domain.ModelCall {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		changed := st.Changed()
		mc, err := st.ModelCalls(t.Context(), "a-1")
		if err != nil {
			t.Fatal(err)
		}
		if len(mc) >= n {
			return mc
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("a-1 has %d relayed calls after 10s, want %d", len(mc), n)
		}
	}
}

// TestRelayNonStreaming: package llm's own client, pointed at the relay
// with the run's token, gets the fake's answer; the fake saw the real key;
// the ledger holds exactly the usage the fake reported.
func TestRelayNonStreaming(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, format, func(llmtest.Turn) llmtest.Reply {
				return llmtest.Reply{Text: "relayed", Usage: llm.Usage{InputTokens: 123, OutputTokens: 45}}
			})
			p, err := llm.New(llm.Config{Provider: format, Model: "m-asked", BaseURL: o.url(format), APIKey: o.tok})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, MaxTokens: 50})
			if err != nil || res.Message.Text != "relayed" {
				t.Fatalf("Complete = %+v, %v", res, err)
			}
			if turns := o.fake.Turns(); len(turns) != 1 || turns[0].APIKey != realKey {
				t.Errorf("the provider saw %d calls, key %q; want 1 with the real key", len(turns), turns[0].APIKey)
			}
			want := domain.ModelCall{ActivationID: "a-1", WorkerID: "w-bot", Model: "m-asked", InputTokens: 123, OutputTokens: 45}
			if mc := calls(t, o.h.Store, 1); len(mc) != 1 || withoutTime(mc[0]) != want {
				t.Errorf("ledger = %+v, want %+v", mc, want)
			}
			if a, _ := o.h.Store.GetActivation(t.Context(), "a-1"); a.InputTokens != 123 || a.OutputTokens != 45 {
				t.Errorf("activation tokens %d/%d, want 123/45 from the ledger", a.InputTokens, a.OutputTokens)
			}
		})
	}
}

func withoutTime(c domain.ModelCall) domain.ModelCall {
	c.At = time.Time{}
	return c
}

// TestRelayStreaming: a "stream": true call comes back as the provider's
// server-sent events, unchanged, and its usage — Anthropic's message_start
// and final message_delta, OpenAI's last chunk, which the relay asked for
// although the client did not — is on the ledger exactly.
func TestRelayStreaming(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, format, func(llmtest.Turn) llmtest.Reply {
				return llmtest.Reply{Text: "streamed reply", ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"body": "x"})},
					Usage: llm.Usage{InputTokens: 321, OutputTokens: 54}}
			})
			resp := o.post(t, format, request(format, true), authHeader(format, o.tok))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			wants := map[string][]string{
				llm.Anthropic: {"event: message_start", `"text":"streame"`, `"text":"d reply"`, `"partial_json":"{\"body\":\"x\"}"`, `"output_tokens":54`, "event: message_stop"},
				llm.OpenAI:    {`"content":"streame"`, `"content":"d reply"`, `"finish_reason":"tool_calls"`, `"prompt_tokens":321`, "data: [DONE]"},
			}[format]
			for _, w := range wants {
				if !strings.Contains(string(body), w) {
					t.Errorf("stream lacks %q:\n%s", w, body)
				}
			}
			turn := o.fake.Turns()[0]
			if !turn.Stream || format == llm.OpenAI && !turn.IncludeUsage {
				t.Errorf("the provider saw stream=%v include_usage=%v", turn.Stream, turn.IncludeUsage)
			}
			want := domain.ModelCall{ActivationID: "a-1", WorkerID: "w-bot", Model: "m-asked", InputTokens: 321, OutputTokens: 54}
			if mc := calls(t, o.h.Store, 1); len(mc) != 1 || withoutTime(mc[0]) != want {
				t.Errorf("ledger = %+v, want %+v", mc, want)
			}
		})
	}
}

// TestRelayPassesErrorsThrough: a provider's 4xx or 5xx comes back as it
// was — status, Retry-After, body — so the agent's retry logic sees what
// the provider said; nothing is recorded for it.
func TestRelayPassesErrorsThrough(t *testing.T) {
	for _, format := range formats {
		for _, status := range []int{400, 429, 500, 529} {
			t.Run(fmt.Sprintf("%s/%d", format, status), func(t *testing.T) {
				o := newOrg(t, format, func(llmtest.Turn) llmtest.Reply {
					return llmtest.Reply{Status: status, RetryAfter: "7", Text: "provider says no"}
				})
				resp := o.post(t, format, request(format, false), authHeader(format, o.tok))
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != status || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(body), `"message":"provider says no"`) {
					t.Errorf("relayed %d (Retry-After %q) %s; want %d, 7 and the provider's body", resp.StatusCode, resp.Header.Get("Retry-After"), body, status)
				}
				// The ledger is written before the relay's handler returns,
				// which a second call's answer proves.
				o.post(t, format, request(format, false), authHeader(format, o.tok))
				if mc, _ := o.h.Store.ModelCalls(t.Context(), "a-1"); len(mc) != 0 {
					t.Errorf("a refused call is on the ledger: %+v", mc)
				}
			})
		}
	}
}

// TestRelayStreamsAsItArrives: each event reaches the agent while the
// provider is still writing the next, and the agent's own headers and
// query pass through while its token does not.
func TestRelayStreamsAsItArrives(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var seen *http.Request
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages/count_tokens" {
			io.WriteString(w, `{"input_tokens":12}`)
			return
		}
		mu.Lock()
		seen = r.Clone(context.Background())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_42")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m-served\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":8}}\n\n")
	}))
	defer provider.Close()
	srv, st, tok := direct(t, relay.Config{Upstream: func(context.Context) (relay.Upstream, error) {
		return relay.Upstream{Provider: llm.Anthropic, BaseURL: provider.URL + "/v1", APIKey: realKey}, nil
	}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/relay/anthropic/v1/messages?beta=true", strings.NewReader(`{"model":"m","stream":true}`))
	req.Header.Set("x-api-key", tok)
	req.Header.Set("anthropic-beta", "tools-2024")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('}')
	if err != nil || !strings.Contains(first, "message_start") {
		close(release)
		t.Fatalf("first event = %q, %v; want it before the provider finishes", first, err)
	}
	close(release)
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), `"output_tokens":8`) {
		t.Errorf("the rest of the stream = %q", rest)
	}
	// Input counts cache reads; the model is the one that served.
	want := domain.ModelCall{ActivationID: "a-1", WorkerID: "w-bot", Model: "m-served", InputTokens: 15, OutputTokens: 8}
	if mc := calls(t, st, 1); withoutTime(mc[0]) != want {
		t.Errorf("ledger = %+v, want %+v", mc[0], want)
	}

	if resp.Header.Get("request-id") != "req_42" {
		t.Errorf("provider headers not passed back: %v", resp.Header)
	}
	mu.Lock()
	if seen.URL.Path != "/v1/messages" || seen.URL.RawQuery != "beta=true" || seen.Header.Get("anthropic-beta") != "tools-2024" ||
		seen.Header.Get("x-api-key") != realKey || seen.Header.Get("Authorization") != "" {
		t.Errorf("provider saw %s?%s with headers %v", seen.URL.Path, seen.URL.RawQuery, seen.Header)
	}
	mu.Unlock()

	// Counting tokens is relayed too, and costs nothing on the ledger.
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/relay/anthropic/v1/messages/count_tokens", strings.NewReader(`{"model":"m"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(body) != `{"input_tokens":12}` {
		t.Errorf("count_tokens = %d %s", resp.StatusCode, body)
	}
	if mc, _ := st.ModelCalls(t.Context(), "a-1"); len(mc) != 1 {
		t.Errorf("count_tokens went on the ledger: %+v", mc)
	}
}

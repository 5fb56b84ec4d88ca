package relay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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

// TestRelayAuth: only a live activation token opens the relay, by either
// header, and only under a Host the server is reached by; nothing reaches
// the provider otherwise.
func TestRelayAuth(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, format, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
			st := o.h.Store
			operator := servertest.Token(t, st, "w-bot")
			ended := activation(t, st, "w-done", "a-done")
			a, _ := st.GetActivation(t.Context(), "a-done")
			a.Status = domain.ActivationSucceeded
			if err := st.FinishActivation(t.Context(), a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-done", Source: "w-done", Message: domain.Message{Body: "exit"}}); err != nil {
				t.Fatal(err)
			}
			dismissed := activation(t, st, "w-gone", "a-gone")
			port := o.h.Server.URL[strings.LastIndex(o.h.Server.URL, ":")+1:]
			if _, err := st.DismissWorker(t.Context(), store.OwnerWorker, "w-gone"); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name   string
				header map[string]string
				want   int
				msg    string
			}{
				{"no token", nil, 401, "missing token"},
				{"unknown token", authHeader(format, store.ActivationTokenPrefix+strings.Repeat("A", 43)), 401, "invalid or expired token"},
				{"the provider key itself", authHeader(format, realKey), 401, "invalid or expired token"},
				{"operator token", map[string]string{"Authorization": "Bearer " + operator}, 401, "not an operator token"},
				{"token of an ended activation", map[string]string{"x-api-key": ended}, 401, "invalid or expired token"},
				{"dismissed worker", map[string]string{"x-api-key": dismissed}, 403, "has been dismissed"},
				{"bearer", map[string]string{"Authorization": "Bearer " + o.tok}, 200, ""},
				{"x-api-key", map[string]string{"x-api-key": o.tok}, 200, ""},
				// A page elsewhere whose name rebinds to this loopback server.
				{"a Host the server is not reached by", map[string]string{"x-api-key": o.tok, "Authorization": "Bearer " + o.tok, "Host": "evil.example:" + port},
					403, "forbidden: invalid Host header evil.example:" + port},
				{"a Host that is no name at all", map[string]string{"x-api-key": o.tok, "Authorization": "Bearer " + o.tok, "Host": "10.0.0.7"}, 403, "invalid Host header 10.0.0.7"},
				{"localhost", map[string]string{"x-api-key": o.tok, "Authorization": "Bearer " + o.tok, "Host": "localhost:" + port}, 200, ""},
			}
			for _, tt := range tests {
				resp := o.post(t, format, request(format, false), tt.header)
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.msg) {
					t.Errorf("%s: %d %s, want %d mentioning %q", tt.name, resp.StatusCode, body, tt.want, tt.msg)
				}
				if tt.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: a 401 without a WWW-Authenticate challenge", tt.name)
				}
			}
			if n := len(o.fake.Turns()); n != 3 {
				t.Errorf("the provider saw %d calls, want only the 3 authorised", n)
			}
		})
	}
}

// TestRelayRefusals: what the relay itself refuses, in the provider's
// error format, without calling the provider.
func TestRelayRefusals(t *testing.T) {
	o := newOrg(t, llm.Anthropic, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
	tests := []struct {
		name, format, body string
		want               int
		msg                string
	}{
		{"not JSON", llm.Anthropic, "hello", 400, `"message":"the request body is not a JSON object","type":"invalid_request_error"`},
		{"nested too deep", llm.Anthropic, `{"model":"m","messages":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, 400,
			`"message":"request: is JSON nested more than 100 levels deep; the limit is 100","type":"invalid_request_error"`},
		{"other wire format", llm.OpenAI, request(llm.OpenAI, false), 400, "relays the anthropic wire format (agent.provider = anthropic); call /relay/anthropic instead"},
	}
	for _, tt := range tests {
		resp := o.post(t, tt.format, tt.body, authHeader(tt.format, o.tok))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.msg) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, body, tt.want, tt.msg)
		}
	}
	if n := len(o.fake.Turns()); n != 0 {
		t.Errorf("the provider saw %d calls", n)
	}
}

// direct serves a relay on its own, with cfg's limits, for cases the
// server's defaults make slow to reach.
func direct(t *testing.T, cfg relay.Config) (*httptest.Server, *store.Store, string) {
	t.Helper()
	h := servertest.Start(t, server.Config{})
	tok := activation(t, h.Store, "w-bot", "a-1")
	cfg.Store = h.Store
	mux := http.NewServeMux()
	for p, handler := range relay.New(cfg).Routes() {
		mux.Handle(p, handler)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, h.Store, tok
}

func TestRelayLimitsAndConfig(t *testing.T) {
	up := func(u relay.Upstream) func(context.Context) (relay.Upstream, error) {
		return func(context.Context) (relay.Upstream, error) { return u, nil }
	}
	tests := []struct {
		name string
		cfg  relay.Config
		body string
		want int
		msg  string
	}{
		{"body over the cap", relay.Config{MaxBodyBytes: 64, Upstream: up(relay.Upstream{Provider: llm.Anthropic, APIKey: "k"})},
			`{"model":"` + strings.Repeat("m", 100) + `"}`, 413, `"message":"request body over 64 bytes","type":"request_too_large"`},
		{"no key configured", relay.Config{Upstream: up(relay.Upstream{Provider: llm.Anthropic})}, `{}`, 503, "an operator sets agent.api_key"},
		{"no upstream at all", relay.Config{}, `{}`, 503, "relays no model provider"},
		{"provider unreachable", relay.Config{Upstream: up(relay.Upstream{Provider: llm.Anthropic, BaseURL: "http://127.0.0.1:1"})}, `{}`, 502, "could not be reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, tok := direct(t, tt.cfg)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/relay/anthropic/v1/messages", strings.NewReader(tt.body))
			req.Header.Set("x-api-key", tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.msg) {
				t.Errorf("%d %s, want %d with %q", resp.StatusCode, body, tt.want, tt.msg)
			}
		})
	}
}

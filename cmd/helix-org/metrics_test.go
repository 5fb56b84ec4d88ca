package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// TestMetricsAfterAWalkthrough: serve is ready, and after a hire, a publish, a run of the
// built-in agent against the fake provider and a webhook delivery, a
// scrape shows every family counting. The main listener serves it to the
// owner's token alone; --metrics-addr serves it without one.
func TestMetricsAfterAWalkthrough(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, llmtest.FollowRole)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	st.SetSetting(t.Context(), domain.PricesSetting, `{"fake-model": {"input": 3, "output": 15}}`)
	st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // the receiver is on loopback
	useFake(t, st, llm.Anthropic, fake)
	receiver := webhooktest.NewReceiver(t, hookSecret)
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, _, owner := startServeWith(t, st, io.Discard, serveConfig{metricsLn: mln})
	call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("create_stream", map[string]any{"id": "s-out", "name": "out", "transport": map[string]any{"kind": "webhook",
		"config": map[string]any{"secret": hookSecret, "outbound_url": receiver.URL + "/hook"}}})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
	hello := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
	waitForReply(t, owner, "s-inbox", "w-echo", hello.Seq)
	out := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-out", "body": "to the outside"})
	waitDelivery(t, st, out.ID)
	waitIdle(t, st)
	servertest.CallErr(t, owner, "get_role", map[string]any{"id": "r-nobody"})
	// The dispatcher has run the hire: serve is ready.
	if code, body := scrape(t, base+"/readyz", ""); code != http.StatusOK || !strings.Contains(body, `"dispatcher":"ok"`) {
		t.Errorf("/readyz = %d %s, want 200 with the dispatcher running", code, body)
	}

	code, body := scrape(t, base+"/metrics", servertest.Token(t, st, store.OwnerWorker))
	if code != http.StatusOK {
		t.Fatalf("owner's scrape: %d %s", code, body)
	}
	for _, want := range []string{
		`helix_org_http_requests_total{route="POST /workers/{id}/mcp",status="200"}`,
		`helix_org_http_request_duration_seconds_count{route="POST /workers/{id}/mcp"}`,
		`helix_org_mcp_tool_calls_total{outcome="ok",tool="publish"}`,
		`helix_org_mcp_tool_calls_total{outcome="tool_error",tool="get_role"}`,
		`helix_org_events_appended_total{kind="local"}`,
		`helix_org_events_appended_total{kind="webhook"}`,
		`helix_org_activations_finished_total{outcome="succeeded"}`,
		`helix_org_activation_duration_seconds_count{outcome="succeeded"}`,
		`helix_org_model_calls_total{model="fake-model"}`,
		`helix_org_model_tokens_total{direction="input",model="fake-model"}`,
		`helix_org_model_tokens_total{direction="output",model="fake-model"}`,
		`helix_org_model_cost_usd_total{model="fake-model"}`,
		`helix_org_delivery_attempts_total{kind="webhook",outcome="delivered"}`,
	} {
		if v, ok := sample(body, want); !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want > 0", want, v, ok)
		}
	}
	for _, want := range []string{"helix_org_triggers_pending", "helix_org_activations_running"} {
		if v, ok := sample(body, want); !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0 once idle", want, v, ok)
		}
	}

	// Who may scrape.
	maya := servertest.Call[domain.Worker](t, owner, "hire_worker", map[string]any{"position": "p-echo", "kind": "human", "name": "Maya"})
	for _, tc := range []struct {
		name, url, token string
		want             int
		wantBody         string
	}{
		{"anonymous on the main listener", base + "/metrics", "", 401, "unauthorized: missing bearer token"},
		{"a bad token", base + "/metrics", "hxo_nope", 401, "invalid or expired token"},
		{"another worker's token", base + "/metrics", servertest.Token(t, st, maya.ID), 403, "only the owner's token may read /metrics"},
		{"anonymous on --metrics-addr", "http://" + mln.Addr().String() + "/metrics", "", 200, "helix_org_http_requests_total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := scrape(t, tc.url, tc.token)
			if code != tc.want || !strings.Contains(body, tc.wantBody) {
				t.Errorf("status %d, want %d with %q:\n%.300s", code, tc.want, tc.wantBody, body)
			}
		})
	}
}

func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample is the value of the series named exactly name (with its labels)
// in a Prometheus text exposition.
func sample(exposition, name string) (float64, bool) {
	for _, line := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			return v, err == nil
		}
	}
	return 0, false
}

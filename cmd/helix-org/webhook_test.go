package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

const hookSecret = "whsec_aGVsaXgtb3JnLXdlYmhvb2stdGVzdC1zZWNyZXQ="

// openTestStore opens a store for an in-process server test with the echo
// agent as the command runtime.
func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeCommand)
	st.SetSetting(ctx, agent.CommandSetting, agentCommand(t, "echo"))
	return st
}

// postWebhook sends body to base/webhooks/stream, signed when secret is set.
func postWebhook(t *testing.T, base, stream, secret, id, contentType, body string, at time.Time) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/webhooks/"+stream, strings.NewReader(body))
	if secret != "" {
		req.Header = webhooktest.Sign(secret, id, at, []byte(body))
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitDelivery waits, on store commits, for the delivery of an event to
// reach a final status, and returns it.
func waitDelivery(t *testing.T, st *store.Store, eventID string) domain.Delivery {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := st.Changed()
		ds, err := st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: eventID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].Status != domain.DeliveryPending {
			return ds[0]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("delivery of %s not finished after 30s: %+v", eventID, ds)
		}
	}
}

// receive waits for the receiver's next request.
func receive(t *testing.T, rcv *webhooktest.Receiver) (webhooktest.Request, webhook.Payload) {
	t.Helper()
	select {
	case r := <-rcv.Got:
		var p webhook.Payload
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatalf("outbound body %q: %v", r.Body, err)
		}
		return r, p
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver got nothing in 30s")
	}
	return webhooktest.Request{}, webhook.Payload{}
}

// TestWebhookBridge is the scenario through the real server,
// dispatcher and delivery engine: a signed webhook POST lands on a webhook
// stream, wakes the subscribed AI worker, and the worker's reply is POSTed,
// signed, to the stream's outbound URL — and nothing else is.
func TestWebhookBridge(t *testing.T) {
	t.Parallel()
	st := openTestStore(t)
	ctx := t.Context()
	st.SetSetting(ctx, safedial.AllowPrivateSetting, "true") // the receiver is on loopback
	rcv := webhooktest.NewReceiver(t, hookSecret)
	base, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-hook", "name": "hook", "transport": map[string]any{"kind": "webhook",
		"config": map[string]any{"secret": hookSecret, "outbound_url": rcv.URL + "/incoming"}}})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	call("invite_workers", map[string]any{"stream": "s-hook", "workers": []string{"w-echo"}})

	code, answer := postWebhook(t, base, "s-hook", hookSecret, "msg_bridge_1", "text/plain", "hello from outside", time.Now())
	if code != http.StatusOK {
		t.Fatalf("inbound webhook: %d %s", code, answer)
	}
	var acc inbound.Answer
	json.Unmarshal([]byte(answer), &acc)
	if len(acc.Events) != 1 {
		t.Fatalf("inbound webhook answered %s, want one event", answer)
	}

	req, p := receive(t, rcv)
	if req.Err != nil {
		t.Errorf("outbound webhook fails the Standard Webhooks reference verification: %v", req.Err)
	}
	ev := p.Data
	if ev.Message.Body != "echo: hello from outside" || ev.Source != "w-echo" || ev.Message.InReplyTo != acc.Events[0].Event || ev.StreamID != "s-hook" {
		t.Errorf("outbound event = %+v, want w-echo's reply to %s", ev, acc.Events[0].Event)
	}
	if req.Header.Get("webhook-id") != ev.ID || p.Type != "message.published" {
		t.Errorf("webhook-id %q type %q, want the event id and message.published", req.Header.Get("webhook-id"), p.Type)
	}
	d := waitDelivery(t, st, ev.ID)
	if d.Status != domain.DeliveryDelivered || d.Attempts != 1 || d.Log[0].Status != http.StatusNoContent {
		t.Errorf("delivery = %+v, want delivered on the first attempt", d)
	}
	// The inbound event came before the reply in the log, so it was
	// already considered and, coming from outside, not sent back out.
	all := servertest.Call[struct {
		Deliveries []domain.Delivery `json:"deliveries"`
	}](t, owner, "list_deliveries", map[string]any{"stream": "s-hook"})
	if len(all.Deliveries) != 1 || len(rcv.Requests()) != 1 {
		t.Errorf("%d deliveries, %d requests; want only the reply", len(all.Deliveries), len(rcv.Requests()))
	}
	waitIdle(t, st)
}

// TestWebhookOutboundGuard: while transport.webhook.allow_private is
// off, create_stream refuses a loopback outbound_url at once, saying what
// to set; with it on, the stream is made. Delivery still checks the
// address it dials: the setting turned off again, the engine refuses the
// loopback receiver (permanently, with the reason recorded) and it sees
// no connection; turning it on applies to the next delivery without a
// restart.
func TestWebhookOutboundGuard(t *testing.T) {
	st := openTestStore(t)
	rcv := webhooktest.NewReceiver(t, hookSecret)
	_, _, owner := startServe(t, st, io.Discard)
	allowPrivate := func(v string) {
		t.Helper()
		if err := st.SetSetting(t.Context(), safedial.AllowPrivateSetting, v); err != nil {
			t.Fatal(err)
		}
	}
	stream := map[string]any{"id": "s-out", "name": "out", "transport": map[string]any{"kind": "webhook",
		"config": map[string]any{"secret": hookSecret, "outbound_url": rcv.URL}}}
	msg := servertest.CallErr(t, owner, "create_stream", stream)
	for _, want := range []string{"transport.config.outbound_url: " + rcv.URL + " is on 127.0.0.1, a loopback, private or special-purpose address",
		"every delivery would be refused", "run `helix-org config set transport.webhook.allow_private true`, then create or update the stream"} {
		if !strings.Contains(msg, want) {
			t.Errorf("create_stream to loopback says %q; want %q", msg, want)
		}
	}
	if _, err := st.GetStream(t.Context(), "s-out"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("after the refusal, s-out: %v; want none made", err)
	}
	allowPrivate("true")
	servertest.Call[map[string]any](t, owner, "create_stream", stream)
	allowPrivate("false")

	refused := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-out", "body": "to loopback"})
	d := waitDelivery(t, st, refused.ID)
	if d.Status != domain.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "not allowed") {
		t.Errorf("delivery to loopback = %+v, want failed once as not allowed", d)
	}
	if n := len(rcv.Requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}

	allowPrivate("true")
	allowed := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-out", "body": "now allowed"})
	if d := waitDelivery(t, st, allowed.ID); d.Status != domain.DeliveryDelivered {
		t.Errorf("delivery with allow_private = %+v, want delivered", d)
	}
	if req, p := receive(t, rcv); req.Err != nil || p.Data.Message.Body != "now allowed" {
		t.Errorf("received %q (verification: %v)", p.Data.Message.Body, req.Err)
	}
}

// TestWebhookRefusedEndToEnd: bad requests to the real server get the
// right status, and store nothing and wake nobody.
func TestWebhookRefusedEndToEnd(t *testing.T) {
	st := openTestStore(t)
	ctx := t.Context()
	st.SetSetting(ctx, webhook.MaxBodySetting, "2048")
	base, _, owner := startServe(t, st, io.Discard)
	call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-hook", "name": "hook", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": hookSecret}}})
	call("create_stream", map[string]any{"id": "s-open", "name": "open", "transport": "webhook"})
	call("create_stream", map[string]any{"id": "s-local", "name": "local"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish"}})
	call("invite_workers", map[string]any{"stream": "s-hook", "workers": []string{"w-echo"}})
	call("invite_workers", map[string]any{"stream": "s-open", "workers": []string{"w-echo"}})
	call("invite_workers", map[string]any{"stream": "s-local", "workers": []string{"w-echo"}})
	waitIdle(t, st) // the hire activation

	now := time.Now()
	big := strings.Repeat("x", 2049)
	tests := []struct {
		name, stream, secret, contentType, body string
		at                                      time.Time
		forge                                   bool
		want                                    int
	}{
		{"bad signature", "s-hook", hookSecret, "text/plain", "hi", now, true, 401},
		{"stale timestamp", "s-hook", hookSecret, "text/plain", "hi", now.Add(-10 * time.Minute), false, 401},
		{"unsigned", "s-hook", "", "text/plain", "hi", now, false, 401},
		{"oversize body", "s-open", "", "text/plain", big, now, false, 413},
		{"malformed JSON", "s-open", "", "application/json", `{"a":1`, now, false, 400},
		{"unknown stream", "s-nope", "", "text/plain", "hi", now, false, 404},
		{"wrong kind", "s-local", "", "text/plain", "hi", now, false, 409},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, _ := st.LastSeq(ctx)
			acts, _ := st.ListActivations(ctx, "")
			secret := tt.secret
			if tt.forge {
				secret = "whsec_Zm9yZ2VkLWtleS1mb3ItdGhlLXRlc3QtMTIzNDU="
			}
			code, answer := postWebhook(t, base, tt.stream, secret, "msg_bad", tt.contentType, tt.body, tt.at)
			if code != tt.want {
				t.Errorf("got %d %s, want %d", code, answer, tt.want)
			}
			seq2, _ := st.LastSeq(ctx)
			acts2, _ := st.ListActivations(ctx, "")
			pending, _ := st.PendingTriggers(ctx)
			if seq2 != seq || len(acts2) != len(acts) || pending != 0 {
				t.Errorf("refused request stored or woke something: seq %d→%d, activations %d→%d, %d triggers pending",
					seq, seq2, len(acts), len(acts2), pending)
			}
		})
	}
}

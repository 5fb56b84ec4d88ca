package main

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// TestWebhookRetryAcrossSIGKILL runs the real binary. The receiver fails
// the first two attempts (asking for a retry in a second) and then
// succeeds. The server is SIGKILLed after the first failed attempt is
// recorded; after a restart the delivery goes on from its stored retry
// time and is delivered exactly once, with the same webhook-id throughout.
func TestWebhookRetryAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	retry := webhooktest.Response{Status: 503, Header: map[string]string{"Retry-After": "1"}, Body: "try again"}
	rcv := webhooktest.NewReceiver(t, hookSecret, retry, retry, webhooktest.Response{Status: 200})
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	st.Bootstrap(ctx, tools.Names())
	st.SetSetting(ctx, safedial.AllowPrivateSetting, "true")
	cfg := `{"secret":"` + hookSecret + `","outbound_url":"` + rcv.URL + `"}`
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-out", Name: "out", Transport: domain.Transport{Kind: webhook.Kind, Config: []byte(cfg)}}); err != nil {
		t.Fatal(err)
	}
	tok := servertest.Token(t, st, "w-owner")
	st.Close()

	srv := startBinary(t, db, envs, addr)
	owner, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	ev := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-out", "body": "survive this"})
	receive(t, rcv)
	st, err = store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	attempts := func() []domain.DeliveryAttempt {
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
		if err != nil || len(ds) != 1 {
			return nil
		}
		return ds[0].Log
	}
	until(t, time.Minute, "the first attempt recorded", func() bool { return len(attempts()) == 1 })
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()

	srv = startBinary(t, db, envs, addr)
	receive(t, rcv)
	receive(t, rcv)
	until(t, time.Minute, "the delivery recorded as delivered", func() bool {
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
		return err == nil && len(ds) == 1 && ds[0].Status == domain.DeliveryDelivered
	})

	var codes []int
	for _, a := range attempts() {
		codes = append(codes, a.Status)
	}
	if diff := cmp.Diff([]int{503, 503, 200}, codes); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	reqs := rcv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Err != nil || r.Header.Get("webhook-id") != ev.ID {
			t.Errorf("request %d: webhook-id %q, verification %v; want %s, verified", i, r.Header.Get("webhook-id"), r.Err, ev.ID)
		}
	}

	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}

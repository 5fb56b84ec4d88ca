package ui_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

const hookSecret = "whsec_aGVsaXgtb3JnLXdlYmhvb2stdGVzdC1zZWNyZXQ="

// newOutbox is the server's outbound queue over st, stepped by the test,
// with webhook delivery refusing private addresses unless the setting
// allows them.
func newOutbox(st *store.Store) *outbox.Engine {
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool { return st.BoolSetting(ctx, safedial.AllowPrivateSetting) }})
	return outbox.New(st, []delivery.Sender{webhook.NewSender(client, webhook.SenderOptions{})}, outbox.Options{})
}

// deliveryOf is the one delivery of an event.
func deliveryOf(t *testing.T, st *store.Store, eventID string) domain.Delivery {
	t.Helper()
	ds, err := st.ListDeliveries(t.Context(), store.DeliveryQuery{EventID: eventID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries of %s: %+v, %v; want one", eventID, ds, err)
	}
	return ds[0]
}

// busyOutbox is how long after a Resend the test's outbox sends.
const busyOutbox = 13 * time.Second

// TestResendAFailedDelivery: a delivery the server refused to send (the
// receiver is on a private address, allowed when the stream was made and
// not since) shows on its stream's page as failed, with why, at 360 px as
// at 1280. Once the operator allows private
// addresses, pressing Resend queues it — the page shows it pending — and
// when the outbox has sent it, even 13 s later, the page shows it
// delivered by itself.
func TestResendAFailedDelivery(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	st := o.h.Store
	ctx := t.Context()
	rcv := webhooktest.NewReceiver(t, hookSecret)
	engine := newOutbox(st)
	// The stream is made while private addresses are allowed (creation
	// refuses a loopback URL otherwise), then they are not: the send fails.
	allowPrivate := func(v string) {
		t.Helper()
		if err := st.SetSetting(ctx, safedial.AllowPrivateSetting, v); err != nil {
			t.Fatal(err)
		}
	}
	allowPrivate("true")
	o.call(t, "create_stream", map[string]any{"id": "s-out", "name": "out", "transport": map[string]any{"kind": "webhook",
		"config": map[string]any{"secret": hookSecret, "outbound_url": rcv.URL}}})
	allowPrivate("false")
	ev := o.call(t, "publish", map[string]any{"stream": "s-out", "body": "deploy 118 finished"})
	if err := engine.Step(ctx); err != nil {
		t.Fatal(err)
	}
	d := deliveryOf(t, st, ev["id"].(string))
	if d.Status != domain.DeliveryFailed {
		t.Fatalf("the delivery to loopback is %s, want failed", d.Status)
	}
	allowPrivate("true")

	tab := o.tab(t, "w-owner")
	row := func(status domain.DeliveryStatus) string {
		return `#deliveries tr[data-delivery="` + strconv.FormatInt(d.ID, 10) + `"][data-status="` + string(status) + `"]`
	}
	for _, size := range uiSizes {
		emulate(t, tab, size.width, size.height, size.mobile)
		uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams/s-out"), chromedp.WaitVisible(chromedp.CSS(row(domain.DeliveryFailed)+" button")))
		text := uitest.Run(t, tab, chromedp.Text(chromedp.CSS(row(domain.DeliveryFailed))))
		for _, want := range []string{"failed", "not allowed", "Resend"} {
			if !strings.Contains(text, want) {
				t.Errorf("at %s px the failed delivery's row reads %q, want %q in it", size.name, text, want)
			}
		}
		if wide := uitest.Run(t, tab, chromedp.Evaluate[string](widest)); wide != "" {
			t.Errorf("the stream page at %s px: %s", size.name, wide)
		}
		t.Logf("%s", uitest.Screenshot(t, tab, "stream-deliveries-"+size.name))
	}
	if n := len(rcv.Requests()); n != 0 {
		t.Fatalf("the receiver got %d requests before Resend", n)
	}

	// Press Resend, and wait for the page it leads to: a wait begun
	// before that navigation would watch the old page.
	emulate(t, tab, uiSizes[0].width, uiSizes[0].height, uiSizes[0].mobile)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams/s-out"))
	pressed, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(pressed, chromedp.Click(chromedp.CSS(row(domain.DeliveryFailed)+" button"))); err != nil {
		t.Fatalf("pressing Resend: %v", err)
	}
	resent := time.Now()
	uitest.Do(t, tab, chromedp.WaitVisible(chromedp.CSS(row(domain.DeliveryPending))))
	// A busy outbox sends it a while after it is due: not a wait for
	// anything to happen but the case itself. The page, reloading as it
	// waits, must still be reloading then (it gave up after ten reloads,
	// some 11 s, and showed pending for good).
	<-time.After(time.Until(resent.Add(busyOutbox)))
	if err := engine.Step(ctx); err != nil {
		t.Fatal(err)
	}
	uitest.Do(t, tab, chromedp.WaitVisible(chromedp.CSS(row(domain.DeliveryDelivered))))

	got := rcv.Requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want the one resent", len(got))
	}
	var p webhook.Payload
	if err := json.Unmarshal(got[0].Body, &p); err != nil || got[0].Err != nil || p.Data.Message.Body != "deploy 118 finished" {
		t.Errorf("the receiver got %s (%v, signature: %v)", got[0].Body, err, got[0].Err)
	}
	if d := deliveryOf(t, st, ev["id"].(string)); d.Status != domain.DeliveryDelivered || d.Attempts != 2 || len(d.Log) != 2 {
		t.Errorf("the delivery after Resend = %+v, want delivered on its second attempt, both in its log", d)
	}
}

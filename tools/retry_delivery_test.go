package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

const retrySecret = "whsec_aGVsaXgtb3JnLXdlYmhvb2stdGVzdC1zZWNyZXQ="

// refusedHook makes s-loop, a webhook stream whose outbound_url is a real
// receiver on loopback, and publishes on it twice; the outbox, running
// with the server's default that refuses private addresses, gives both
// deliveries up at once. It returns the receiver and the outbox.
func refusedHook(t *testing.T, f fixture) (*webhooktest.Receiver, *outbox.Engine) {
	t.Helper()
	ctx := t.Context()
	st := f.env.Store
	rcv := webhooktest.NewReceiver(t, retrySecret)
	must(t)(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-loop", Name: "loop",
		Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(`{"secret":"` + retrySecret + `","outbound_url":"` + rcv.URL + `"}`)}}))
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool { return st.BoolSetting(ctx, safedial.AllowPrivateSetting) }})
	engine := outbox.New(st, []delivery.Sender{webhook.NewSender(client, webhook.SenderOptions{})}, outbox.Options{Now: f.clock.Now})
	for _, body := range []string{"deploy 1 done", "deploy 2 done"} {
		must(t)(st.Append(ctx, domain.Event{StreamID: "s-loop", Source: "w-maya", Message: domain.Message{Body: body}}, store.AppendOptions{}))
	}
	if err := engine.Step(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{StreamID: "s-loop"})
	if err != nil || len(ds) != 2 || ds[0].Status != domain.DeliveryFailed || !strings.Contains(ds[0].LastError, "not allowed") {
		t.Fatalf("deliveries to loopback = %+v, %v; want both failed as not allowed", ds, err)
	}
	if n := len(rcv.Requests()); n != 0 {
		t.Fatalf("the receiver got %d requests before private addresses were allowed", n)
	}
	// The operator fixes the cause.
	must(t)(nil, st.SetSetting(ctx, safedial.AllowPrivateSetting, "true"))
	return rcv, engine
}

// retryView is the part of a retried delivery this table states.
type retryView struct {
	ID            int64                 `json:"id"`
	StreamID      string                `json:"streamId"`
	Status        domain.DeliveryStatus `json:"status"`
	Attempts      int                   `json:"attempts"`
	RetriedAfter  int                   `json:"retriedAfter"`
	NextAttemptAt *time.Time            `json:"nextAttemptAt"`
}

func TestRetryDelivery(t *testing.T) {
	type out struct {
		Requeued []retryView `json:"requeued"`
	}
	now := new(t0)
	// Each case runs once, on its own fixture: these hold what its setup
	// made for its check.
	var one, all struct {
		rcv    *webhooktest.Receiver
		engine *outbox.Engine
	}
	// delivered checks that the next step of the outbox delivers exactly
	// the bodies to the receiver, signed, each on its second attempt.
	delivered := func(t *testing.T, f fixture, rcv *webhooktest.Receiver, engine *outbox.Engine, bodies ...string) {
		t.Helper()
		ctx := t.Context()
		if err := engine.Step(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rcv.Requests() {
			var p webhook.Payload
			if err := json.Unmarshal(r.Body, &p); err != nil || r.Err != nil {
				t.Errorf("the receiver got %s (%v, signature: %v)", r.Body, err, r.Err)
			}
			got = append(got, p.Data.Message.Body)
		}
		slices.Sort(got) // the outbox sends concurrently
		if strings.Join(got, "|") != strings.Join(bodies, "|") {
			t.Errorf("the receiver got %q, want %q", got, bodies)
		}
		ds, err := f.env.Store.ListDeliveries(ctx, store.DeliveryQuery{StreamID: "s-loop", Status: domain.DeliveryDelivered})
		if err != nil || len(ds) != len(bodies) {
			t.Fatalf("delivered = %+v, %v; want %d", ds, err, len(bodies))
		}
		for _, d := range ds {
			if d.Attempts != 2 || len(d.Log) != 2 || d.Log[0].Error == "" || d.Log[1].Status != http.StatusNoContent {
				t.Errorf("delivery %d: %d attempts, log %+v; want the refused one kept and a 204 after it", d.ID, d.Attempts, d.Log)
			}
		}
		if c := lastOrgChange(t, f.env.Store); c.Action != "retry_delivery" || c.Actor != store.OwnerWorker || c.Target != "s-loop" {
			t.Errorf("last s-org change = %+v, want the owner's retry_delivery of s-loop", c)
		}
	}
	runTable(t, "retry_delivery", []toolCase[out]{
		{name: "a failed delivery goes out on the next attempt",
			setup: func(t *testing.T, f fixture) { one.rcv, one.engine = refusedHook(t, f) },
			args:  map[string]any{"delivery": 2},
			want:  out{Requeued: []retryView{{ID: 2, StreamID: "s-loop", Status: domain.DeliveryPending, Attempts: 1, RetriedAfter: 1, NextAttemptAt: now}}},
			check: func(t *testing.T, f fixture, _ out) { delivered(t, f, one.rcv, one.engine, "deploy 2 done") }},
		{name: "every failed delivery of a stream",
			setup: func(t *testing.T, f fixture) { all.rcv, all.engine = refusedHook(t, f) },
			args:  map[string]any{"stream": "s-loop"},
			want: out{Requeued: []retryView{{ID: 1, StreamID: "s-loop", Status: domain.DeliveryPending, Attempts: 1, RetriedAfter: 1, NextAttemptAt: now},
				{ID: 2, StreamID: "s-loop", Status: domain.DeliveryPending, Attempts: 1, RetriedAfter: 1, NextAttemptAt: now}}},
			check: func(t *testing.T, f fixture, _ out) {
				delivered(t, f, all.rcv, all.engine, "deploy 1 done", "deploy 2 done")
			}},
		{name: "a stream with none failed", setup: addDeliveries, args: map[string]any{"stream": "s-hook"}, want: out{Requeued: []retryView{}}},
		{name: "a delivered one", setup: addDeliveries, args: map[string]any{"delivery": 1},
			wantErr: []string{"delivery 1: it was delivered (attempt 2); sending it again would deliver it twice"}, wantIs: domain.ErrConflict},
		{name: "a pending one", setup: addDeliveries, args: map[string]any{"delivery": 2},
			wantErr: []string{"delivery 2: it is pending already: the outbox sends it when it is due"}, wantIs: domain.ErrConflict},
		{name: "a disabled one, its endpoint still disabled", setup: disableHook, args: map[string]any{"delivery": 2},
			wantErr: []string{"delivery 2: stream s-hook's endpoint is disabled (its remote answered 410 Gone); enable_endpoint s-hook first"}, wantIs: domain.ErrConflict},
		{name: "unknown delivery", args: map[string]any{"delivery": 99}, wantErr: []string{"delivery 99: not found"}, wantIs: domain.ErrNotFound},
		{name: "unknown stream", args: map[string]any{"stream": "s-nope"}, wantErr: []string{`stream "s-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "neither", args: map[string]any{}, wantErr: []string{"delivery: is required"}, wantIs: domain.ErrInvalid},
		{name: "both", args: map[string]any{"delivery": 1, "stream": "s-hook"}, wantErr: []string{"stream: give a delivery or a stream, not both"}, wantIs: domain.ErrInvalid},
	})
}

// TestRetryDeliveryAuthority: like enable_endpoint, retrying is an
// admin's, held by grant: a worker without the grant, or a member with
// it, is refused and nothing is queued.
func TestRetryDeliveryAuthority(t *testing.T) {
	tests := []struct {
		name    string
		grant   bool
		role    domain.OrgRole
		wantErr string
	}{
		{name: "no grant", wantErr: `missing grant: worker w-maya does not hold grant "retry_delivery"`},
		{name: "a member with the grant", grant: true, role: domain.RoleMember, wantErr: "member may not call retry_delivery: it is an admin's"},
		{name: "an admin with the grant", grant: true, role: domain.RoleAdmin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			refusedHook(t, f)
			ctx := t.Context()
			granted := []string{"list_deliveries"}
			if tt.grant {
				f.grant(t, "w-maya", "retry_delivery")
				granted = append(granted, "retry_delivery")
			}
			if tt.role != domain.RoleMember && tt.role != "" {
				must(t)(f.env.Store.SetOrgRole(ctx, store.OwnerWorker, "w-maya", tt.role))
			}
			o := Call(ctx, f.as("w-maya"), granted, "retry_delivery", json.RawMessage(`{"delivery":1}`))
			pending, err := f.env.Store.ListDeliveries(ctx, store.DeliveryQuery{Status: domain.DeliveryPending})
			must(t)(pending, err)
			if tt.wantErr == "" {
				if o.Err != nil || len(pending) != 1 {
					t.Fatalf("retry_delivery = %v, %d pending; want delivery 1 queued", o.Err, len(pending))
				}
				return
			}
			if o.Err == nil || !errors.Is(o.Err, domain.ErrForbidden) || !strings.Contains(o.Err.Error(), tt.wantErr) {
				t.Errorf("retry_delivery = %v, want forbidden %q", o.Err, tt.wantErr)
			}
			if len(pending) != 0 {
				t.Errorf("a refused retry queued %d deliveries", len(pending))
			}
		})
	}
}

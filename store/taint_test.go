package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestClaimRecordsTaint: a run woken by what an inbound route appended on
// a kind not marked trusted is tainted, naming the event; one woken by a
// trusted kind (the schedule's clock) or by a person is not.
func TestClaimRecordsTaint(t *testing.T) {
	kinds := domain.NewTransports(
		domain.TransportSpec{Kind: "webhook", Publish: true},
		domain.TransportSpec{Kind: "clock", Trusted: true},
	)
	cases := []struct {
		name   string
		stream domain.Transport
		source string
		want   string
	}{
		{"inbound webhook", domain.Transport{Kind: "webhook"}, "", "arrived from outside on webhook stream s-x"},
		{"the clock", domain.Transport{Kind: "clock"}, "", ""},
		{"a person on a local stream", domain.Transport{Kind: domain.TransportLocal}, "w-owner", ""},
		{"a person on a webhook stream", domain.Transport{Kind: "webhook"}, "w-owner", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := storetest.NewWith(t, store.Options{Transports: kinds})
			seed(t, st)
			ctx := t.Context()
			if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-ai", Kind: domain.WorkerAI, PositionID: "p-a", Name: "ai"}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-x", Name: "x", Transport: c.stream}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Subscribe(ctx, "", "s-x", "w-ai"); err != nil {
				t.Fatal(err)
			}
			hire, _, _, err := st.Claim(ctx, "w-ai", "a-hire", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			hire.Status = domain.ActivationSucceeded
			if err := st.FinishActivation(ctx, hire, exitLog()); err != nil {
				t.Fatal(err)
			}
			msg := domain.Message{Body: "do something"}
			if c.source == "" {
				_, err = st.AppendInbound(ctx, []domain.Inbound{{StreamID: "s-x", Key: "k", Message: msg}}, 0)
			} else {
				_, err = st.Append(ctx, domain.Event{StreamID: "s-x", Source: c.source, Message: msg}, store.AppendOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			act, _, _, err := st.Claim(ctx, "w-ai", "a-run", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := st.GetActivation(ctx, act.ID)
			if got.Tainted != (c.want != "") || !strings.Contains(got.TaintReason, c.want) {
				t.Errorf("run = tainted %v (%q), want %q", got.Tainted, got.TaintReason, c.want)
			}
		})
	}
}

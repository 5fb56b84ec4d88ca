package outbox_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/delivery"
)

// slowSender is a remote that takes 25s to answer (under every sender's
// 30s cut-off) and, while it does, lets the other server's engine look
// for due deliveries.
type slowSender struct {
	*fakeSender
	clock *storetest.Clock
	// meanwhile runs while the send is in progress.
	meanwhile func()
}

func (s slowSender) Send(ctx context.Context, st domain.Stream, ev domain.Event, attempt int) delivery.Outcome {
	out := s.fakeSender.Send(ctx, st, ev, attempt)
	s.clock.Advance(25 * time.Second)
	s.meanwhile()
	return out
}

// TestTwoServersSendEachDeliveryOnce: two servers on one PostgreSQL
// database run their delivery engines over the same deliveries. While
// one server's attempt is still talking to a slow remote, the other
// sends what is due but leaves that one alone: each event is sent once.
func TestTwoServersSendEachDeliveryOnce(t *testing.T) {
	url := storetest.PostgresURL(t)
	clock := storetest.NewClock(t0)
	key := filepath.Join(t.TempDir(), "key")
	open := func() *store.Store {
		st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Now: clock.Now, Transports: hookTransports})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b := seedRig(t, open(), clock), rig{st: open(), clock: clock}
	for _, body := range []string{"one", "two", "three"} {
		a.publish(t, "s-out", "w-maya", body)
	}
	// The default backoff: a first attempt's claim would lapse after
	// 15–30s, within one slow send. A sends one at a time, so each send
	// is all that runs on A meanwhile.
	opts := outbox.Options{Now: clock.Now, Jitter: func(d time.Duration) time.Duration { return d / 2 }, Concurrency: 1}
	onB := newFake()
	engineB := outbox.New(b.st, []delivery.Sender{onB}, opts)
	onA := slowSender{fakeSender: newFake(), clock: clock, meanwhile: func() { step(t, engineB) }}
	step(t, outbox.New(a.st, []delivery.Sender{onA}, opts))
	step(t, engineB)
	times := map[string]int{}
	for _, s := range append(onA.sent(), onB.sent()...) {
		times[s.Body]++
	}
	if len(onA.sent()) == 0 || times["one"] != 1 || times["two"] != 1 || times["three"] != 1 {
		t.Errorf("sent by A %+v and by B %+v; want each event once, the first by A", onA.sent(), onB.sent())
	}
	for _, d := range deliveries(t, b.st) {
		if d.Status != domain.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivery %d is %s after %d attempts, want delivered after 1", d.ID, d.Status, d.Attempts)
		}
	}
}

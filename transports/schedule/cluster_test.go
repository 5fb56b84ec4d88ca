package schedule_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/schedule"
	"github.com/helixml/helix-org/transports/transport"
)

// TestTwoServersTickOnce: two servers on one PostgreSQL database both run
// the ticker; each occurrence is one tick, whichever server steps first
// and however often both step.
func TestTwoServersTickOnce(t *testing.T) {
	url := storetest.PostgresURL(t)
	clock := storetest.NewClock(time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC))
	key := filepath.Join(t.TempDir(), "key")
	open := func() *store.Store {
		st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Now: clock.Now, Transports: transport.List{schedule.Transport}.Specs()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a := seedRig(t, open(), clock, `{"cron":"*/30 * * * *"}`)
	b := open()
	for _, at := range []time.Duration{time.Minute, 30 * time.Minute, 30 * time.Minute} {
		clock.Advance(at)
		var wg sync.WaitGroup
		for _, st := range []*store.Store{a.st, b, a.st, b} {
			wg.Go(func() {
				if _, err := (&schedule.Ticker{Store: st, Now: clock.Now}).Step(t.Context()); err != nil {
					t.Errorf("step: %v", err)
				}
			})
		}
		wg.Wait()
	}
	ticks, _ := a.step(t)
	if len(ticks) != 3 {
		t.Fatalf("%d ticks for 09:00, 09:30 and 10:00: %+v", len(ticks), ticks)
	}
	for i, want := range []time.Time{time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC), time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)} {
		if !ticks[i].Scheduled.Equal(want) || ticks[i].Missed != 0 {
			t.Errorf("tick %d = %+v, want %s with nothing missed", i, ticks[i], want)
		}
	}
}

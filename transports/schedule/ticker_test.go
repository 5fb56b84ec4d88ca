package schedule_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/schedule"
	"github.com/helixml/helix-org/transports/transport"
)

// rig is a store on a fake clock with one schedule stream followed by an
// AI worker.
type rig struct {
	st    *store.Store
	clock *storetest.Clock
}

func newRig(t *testing.T, start time.Time, config string) rig {
	t.Helper()
	clock := storetest.NewClock(start)
	return seedRig(t, storetest.NewWith(t, store.Options{Now: clock.Now, Transports: transport.List{schedule.Transport}.Specs()}), clock, config)
}

// seedRig writes the rig's org into st, whose clock is clock.
func seedRig(t *testing.T, st *store.Store, clock *storetest.Clock, config string) rig {
	t.Helper()
	ctx := t.Context()
	steps := []func() error{
		func() error { _, err := st.Bootstrap(ctx, nil); return err },
		func() error {
			_, err := st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-sum", Title: "Summariser", Content: "Every morning at 8, summarise yesterday."})
			return err
		},
		func() error {
			_, err := st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-sum", RoleID: "r-sum", Title: "Summariser"})
			return err
		},
		func() error {
			_, err := st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-sum", Kind: domain.WorkerAI, PositionID: "p-sum", Name: "Sum"}, nil)
			return err
		},
		func() error {
			_, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-clock", Name: "clock", Transport: domain.Transport{Kind: schedule.Kind, Config: json.RawMessage(config)}})
			return err
		},
		func() error { _, err := st.Subscribe(ctx, store.OwnerWorker, "s-clock", "w-sum"); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	return rig{st: st, clock: clock}
}

// step runs one pass of a fresh ticker — as a restarted server would —
// and returns the stream's ticks.
func (r rig) step(t *testing.T) ([]schedule.Tick, []domain.Event) {
	t.Helper()
	if _, err := (&schedule.Ticker{Store: r.st, Now: r.clock.Now}).Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, err := r.st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	ticks := make([]schedule.Tick, len(evs))
	for i, ev := range evs {
		if err := json.Unmarshal(ev.Message.Extra, &ticks[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ticks, evs
}

// TestTicksOnTime: "0 8 * * 1-5" in London ticks at 08:00 local, not a
// second before, once — however often the ticker steps or restarts —
// and not at the weekend.
func TestTicksOnTime(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	r := newRig(t, time.Date(2026, 3, 27, 7, 59, 0, 0, london), `{"cron":"0 8 * * 1-5","timezone":"Europe/London"}`) // a Friday
	ticker := &schedule.Ticker{Store: r.st, Now: r.clock.Now}
	next, err := ticker.Step(t.Context())
	if err != nil || !next.Equal(time.Date(2026, 3, 27, 8, 0, 0, 0, london)) {
		t.Fatalf("next = %v, %v; want Friday 08:00 London", next, err)
	}
	r.clock.Advance(59 * time.Second)
	if ticks, _ := r.step(t); len(ticks) != 0 {
		t.Fatalf("ticked at 07:59:59: %+v", ticks)
	}
	r.clock.Advance(time.Second)
	for range 3 {
		ticks, evs := r.step(t)
		if len(ticks) != 1 || !ticks[0].Scheduled.Equal(time.Date(2026, 3, 27, 8, 0, 0, 0, london)) || ticks[0].Missed != 0 {
			t.Fatalf("at 08:00: %+v, want one tick for 08:00", ticks)
		}
		if !strings.Contains(evs[0].Message.Body, "Fri 27 Mar 2026 08:00 GMT") || evs[0].Source != "" {
			t.Errorf("tick = %+v", evs[0])
		}
	}
	if ws, _ := r.st.WorkersWithPending(t.Context()); len(ws) != 1 || ws[0] != "w-sum" {
		t.Errorf("woken: %v, want w-sum", ws)
	}
	// Over the weekend, into British Summer Time: Monday 08:00 BST.
	r.clock.Advance(72 * time.Hour)
	ticks, evs := r.step(t)
	if len(ticks) != 2 || !ticks[1].Scheduled.Equal(time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)) || ticks[1].Missed != 0 {
		t.Fatalf("Monday: %+v, want a second tick at 07:00Z and nothing missed at the weekend", ticks)
	}
	if !strings.Contains(evs[1].Message.Body, "Mon 30 Mar 2026 08:00 BST") {
		t.Errorf("Monday's tick = %q", evs[1].Message.Body)
	}
}

// TestMissedTicksCoalesced: after a three-hour stop, a half-hourly stream
// gets one tick standing for the occurrences it missed, saying how many
// and since when; restarting again adds nothing.
func TestMissedTicksCoalesced(t *testing.T) {
	start := time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)
	r := newRig(t, start, `{"cron":"*/30 * * * *"}`)
	r.clock.Advance(time.Minute)
	if ticks, _ := r.step(t); len(ticks) != 1 || ticks[0].Missed != 0 {
		t.Fatalf("09:00: %+v", ticks)
	}
	r.clock.Advance(3 * time.Hour) // the server is down from 09:00 to 12:00
	ticks, evs := r.step(t)
	if len(ticks) != 2 {
		t.Fatalf("after the stop: %d ticks, want 2 (one coalesced)", len(ticks))
	}
	got := ticks[1]
	since := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	if !got.Scheduled.Equal(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)) || got.Missed != 5 || got.MissedSince == nil || !got.MissedSince.Equal(since) {
		t.Errorf("coalesced tick = %+v, want 12:00 standing for 5 missed since 09:30", got)
	}
	if body := evs[1].Message.Body; !strings.Contains(body, "5 earlier occurrence(s), the first at Mon 2 Mar 2026 09:30 UTC") {
		t.Errorf("body = %q", body)
	}
	if ticks, _ := r.step(t); len(ticks) != 2 {
		t.Errorf("a restart at 12:00 added %d ticks", len(ticks)-2)
	}
	r.clock.Advance(29 * time.Minute)
	if ticks, _ := r.step(t); len(ticks) != 2 {
		t.Errorf("ticked before 12:30")
	}
	r.clock.Advance(time.Minute)
	if ticks, _ := r.step(t); len(ticks) != 3 || ticks[2].Missed != 0 {
		t.Errorf("12:30: %+v", ticks)
	}
}

// TestTickCarriesMessage: a schedule whose config has a message ticks
// with its subject and body, the occurrence still said after the body.
func TestTickCarriesMessage(t *testing.T) {
	r := newRig(t, time.Date(2026, 3, 2, 7, 59, 0, 0, time.UTC),
		`{"cron":"0 8 * * *","message":{"subject":"Morning summary","body":"Summarise yesterday's events on s-sales."}}`)
	r.clock.Advance(time.Minute)
	ticks, evs := r.step(t)
	if len(ticks) != 1 || !ticks[0].Scheduled.Equal(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("ticks = %+v, want one at 08:00", ticks)
	}
	m := evs[0].Message
	if m.Subject != "Morning summary" || !strings.HasPrefix(m.Body, "Summarise yesterday's events on s-sales.\n\n(Scheduled tick of s-clock for Mon 2 Mar 2026 08:00 UTC") {
		t.Errorf("tick message = %q / %q", m.Subject, m.Body)
	}
}

// TestTickMessageChecked: a message no tick could carry is refused when
// the stream is made, naming the field.
func TestTickMessageChecked(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"empty", `{"cron":"0 8 * * *","message":{}}`, "transport.config.message"},
		{"long subject", `{"cron":"0 8 * * *","message":{"subject":"` + strings.Repeat("x", domain.MaxSubject+1) + `"}}`, "message.subject"},
		{"unknown field", `{"cron":"0 8 * * *","message":{"text":"hi"}}`, "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schedule.ParseStreamConfig(json.RawMessage(tc.config))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

package schedule

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/transport"
)

// MaxCounted bounds how many missed occurrences a tick counts exactly.
const MaxCounted = 10000

// Ticker publishes the ticks of every schedule stream. It keeps no state
// of its own: the last tick is the stream's latest event, whose extra
// names the occurrence it stands for, so a restart neither repeats nor
// loses a tick, and the occurrences a stopped server missed become one
// tick that says how many they were and since when.
type Ticker struct {
	Store transport.Store
	// Now is the clock (time.Now when nil); tests move a fake one.
	Now    func() time.Time
	Logger *slog.Logger
}

// Tick is the extra of a tick event.
type Tick struct {
	// Scheduled is the occurrence the tick stands for.
	Scheduled time.Time `json:"scheduled"`
	Cron      string    `json:"cron"`
	Timezone  string    `json:"timezone"`
	// Missed counts the earlier occurrences since the previous tick that
	// got no tick of their own (the server was down); MissedSince is the
	// first of them.
	Missed      int        `json:"missed,omitempty"`
	MissedSince *time.Time `json:"missedSince,omitempty"`
}

// Run ticks until ctx ends, waking at the next occurrence, when the store
// changes (a new schedule stream) and at least every minute.
func (t *Ticker) Run(ctx context.Context) error {
	for {
		changed := t.Store.Changed()
		next, err := t.Step(ctx)
		if err != nil && ctx.Err() == nil {
			t.log().Error("schedule step", "err", err)
		}
		wait := time.Minute
		if !next.IsZero() {
			wait = min(max(next.Sub(t.now()), 0), wait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// Step publishes the tick of every stream whose next occurrence has come,
// and returns the earliest occurrence still to come (zero for none).
func (t *Ticker) Step(ctx context.Context) (time.Time, error) {
	streams, err := t.Store.ListStreams(ctx, Kind)
	if err != nil {
		return time.Time{}, err
	}
	now := t.now()
	var next time.Time
	var errs []error
	for _, st := range streams {
		n, err := t.stepStream(ctx, st, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("stream %s: %w", st.ID, err))
		}
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, errors.Join(errs...)
}

// stepStream ticks one stream if an occurrence is due, returning its next.
func (t *Ticker) stepStream(ctx context.Context, st domain.Stream, now time.Time) (time.Time, error) {
	s, err := ParseStreamConfig(st.Transport.Config)
	if err != nil {
		return time.Time{}, err
	}
	last, err := t.lastTick(ctx, st)
	if err != nil {
		return time.Time{}, err
	}
	due, missed, since := occurrences(s, last, now)
	if !due.IsZero() {
		if err := t.publish(ctx, st, s, due, missed, since); err != nil {
			return time.Time{}, err
		}
		last = due
	}
	return s.Next(last), nil
}

// lastTick is the occurrence the stream's latest tick stands for, or the
// stream's creation: a new stream's first tick is its first occurrence.
func (t *Ticker) lastTick(ctx context.Context, st domain.Stream) (time.Time, error) {
	ev, err := t.Store.LatestInbound(ctx, st.ID, "", "")
	if errors.Is(err, domain.ErrNotFound) {
		return st.CreatedAt, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	var tick Tick
	if json.Unmarshal(ev.Message.Extra, &tick) != nil || tick.Scheduled.IsZero() {
		return ev.CreatedAt, nil
	}
	return tick.Scheduled, nil
}

// occurrences are those in (last, now]: the latest (zero for none), how
// many came before it, and the first of those.
func occurrences(s Schedule, last, now time.Time) (due time.Time, missed int, since time.Time) {
	for at := s.Next(last); !at.IsZero() && !at.After(now); at = s.Next(at) {
		if !due.IsZero() {
			if missed == 0 {
				since = due
			}
			missed++
		}
		due = at
		if missed >= MaxCounted {
			// Skip ahead: count no further, but tick for the latest.
			for n := s.Next(at); !n.IsZero() && !n.After(now); n = s.Next(n) {
				due = n
			}
			break
		}
	}
	return due, missed, since
}

func (t *Ticker) publish(ctx context.Context, st domain.Stream, s Schedule, due time.Time, missed int, since time.Time) error {
	tick := Tick{Scheduled: due.UTC(), Cron: s.Cron, Timezone: s.Timezone, Missed: missed}
	local := due.In(s.loc).Format("Mon 2 Jan 2006 15:04 MST")
	body := fmt.Sprintf("Scheduled tick of %s for %s (cron %q, %s).", st.ID, local, s.Cron, s.Timezone)
	if missed > 0 {
		at := since.UTC()
		tick.MissedSince = &at
		count := fmt.Sprint(missed)
		if missed >= MaxCounted {
			count = fmt.Sprintf("at least %d", missed)
		}
		body += fmt.Sprintf(" The server was down: %s earlier occurrence(s), the first at %s, got no tick of their own; this tick stands for them too.",
			count, since.In(s.loc).Format("Mon 2 Jan 2006 15:04 MST"))
	}
	subject := "tick " + s.Cron
	if m := s.Message; m != nil {
		// The configured message leads; the tick's own words follow it,
		// so a follower still knows which occurrence woke it.
		subject = cmp.Or(m.Subject, subject)
		if m.Body != "" {
			body = m.Body + "\n\n(" + body + ")"
		}
	}
	extra, _ := json.Marshal(tick)
	msg := domain.Message{From: "schedule", Subject: subject, Body: body, BodyContentType: "text/plain",
		MessageID: tick.Scheduled.Format(time.RFC3339), Extra: extra}
	// Keyed by the occurrence: two servers, or a restart mid-step, store it once.
	_, err := t.Store.AppendInbound(ctx, []domain.Inbound{{StreamID: st.ID, Message: msg, Key: msg.MessageID}}, 0)
	if err == nil {
		t.log().Info("schedule tick", "stream", st.ID, "scheduled", due, "missed", missed)
	}
	return err
}

func (t *Ticker) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

func (t *Ticker) log() *slog.Logger {
	if t.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return t.Logger.With("component", "schedule")
}

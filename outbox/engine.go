package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
)

// Options tune the engine. Zero values take the defaults.
type Options struct {
	// BaseDelay is the wait after the first failed attempt; each later one
	// doubles it. Default 30s: 8 attempts span about an hour.
	BaseDelay time.Duration
	// MaxDelay caps a wait, including a remote's Retry-After. Default 6h.
	MaxDelay time.Duration
	// Concurrency is the most attempts in flight at once. Default 8.
	Concurrency int
	// BatchSize bounds one read of the log or of due deliveries. Default 100.
	BatchSize int
	// Cursor names this engine's position in the event log. Default "outbound".
	Cursor string
	// Now is the clock, for tests. Default time.Now.
	Now func() time.Time
	// Jitter picks the actual wait for a backoff of d. Default: uniform in [d/2, d].
	Jitter func(d time.Duration) time.Duration
	Logger *slog.Logger
	// OnAttempt, if set, hears how every attempt ended: delivered, retry,
	// failed or disabled (the server's metrics).
	OnAttempt func(kind domain.TransportKind, outcome string)
}

// Engine tails the event log and delivers what its Senders want.
type Engine struct {
	st      *store.Store
	senders map[domain.TransportKind]delivery.Sender
	kinds   []domain.TransportKind
	opts    Options
	log     *slog.Logger
	sem     chan struct{}

	cursorMu sync.Mutex
	cursor   int64 // in memory, ahead of the stored one between enqueues
	loaded   bool

	mu       sync.Mutex
	inFlight map[int64]bool
	finished chan struct{} // signalled when an attempt ends, to re-check what is due
}

// New builds an engine over the store with one Sender per transport kind.
func New(st *store.Store, senders []delivery.Sender, opts Options) *Engine {
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 30 * time.Second
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 6 * time.Hour
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	if opts.Cursor == "" {
		opts.Cursor = "outbound"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = func(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{st: st, senders: map[domain.TransportKind]delivery.Sender{}, opts: opts, log: opts.Logger.With("component", "delivery"),
		sem: make(chan struct{}, opts.Concurrency), inFlight: map[int64]bool{}, finished: make(chan struct{}, 1)}
	for _, s := range senders {
		e.senders[s.Kind()] = s
		e.kinds = append(e.kinds, s.Kind())
	}
	return e
}

// Run delivers until ctx ends, waking on every store commit, when the
// earliest retry is due and when an attempt finishes. Attempts in flight
// are cancelled and waited for before it returns.
func (e *Engine) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		changed := e.st.Changed()
		if err := e.step(ctx, &wg); err != nil && ctx.Err() == nil {
			e.log.Error("delivery step", "err", err)
		}
		wait := e.untilNext(ctx)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
		case <-e.finished:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// untilNext is how long Run may sleep before a pending delivery is due;
// at most a minute, so a failed query or a clock jump heals by itself.
func (e *Engine) untilNext(ctx context.Context) time.Duration {
	at, ok, err := e.st.NextDeliveryAt(ctx, e.kinds)
	if err != nil || !ok {
		return time.Minute
	}
	return min(max(at.Sub(e.opts.Now()), 0), time.Minute)
}

// Step records deliveries for every new event and makes every due
// attempt, waiting for them: one synchronous pass, for tests.
func (e *Engine) Step(ctx context.Context) error {
	var wg sync.WaitGroup
	err := e.step(ctx, &wg)
	wg.Wait()
	return err
}

func (e *Engine) step(ctx context.Context, wg *sync.WaitGroup) error {
	if err := e.enqueue(ctx); err != nil {
		return err
	}
	due, err := e.st.DueDeliveries(ctx, e.kinds, e.opts.Now(), e.opts.BatchSize)
	if err != nil {
		return err
	}
	for _, d := range due {
		if !e.take(d.ID) {
			continue
		}
		select {
		case e.sem <- struct{}{}:
		case <-ctx.Done():
			e.release(d.ID)
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-e.sem; e.release(d.ID) }()
			if err := e.attempt(ctx, d); err != nil && ctx.Err() == nil {
				e.log.Error("delivery attempt", "delivery", d.ID, "event", d.EventID, "err", err)
			}
		}()
	}
	return nil
}

func (e *Engine) take(id int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFlight[id] {
		return false
	}
	e.inFlight[id] = true
	return true
}

func (e *Engine) release(id int64) {
	e.mu.Lock()
	delete(e.inFlight, id)
	e.mu.Unlock()
	select {
	case e.finished <- struct{}{}:
	default:
	}
}

// enqueue reads the log from the cursor and records a delivery for every
// event a Sender wants. The cursor is stored with the deliveries it
// produced; a stretch of events nobody sends only moves it in memory, so
// busy inbound traffic costs no extra writes (a restart rescans it).
func (e *Engine) enqueue(ctx context.Context) error {
	if len(e.kinds) == 0 {
		return nil
	}
	e.cursorMu.Lock()
	defer e.cursorMu.Unlock()
	if !e.loaded {
		c, err := e.st.DeliveryCursor(ctx, e.opts.Cursor)
		if err != nil {
			return err
		}
		e.cursor, e.loaded = c, true
	}
	streams := map[string]domain.Stream{}
	for {
		evs, upTo, err := e.st.OutboundEvents(ctx, e.kinds, e.cursor, e.opts.BatchSize)
		if err != nil {
			return err
		}
		next := upTo
		if len(evs) == e.opts.BatchSize {
			next = evs[len(evs)-1].Seq
		}
		var ds []domain.Delivery
		for _, ev := range evs {
			st, ok := streams[ev.StreamID]
			if !ok {
				if st, err = e.st.GetStream(ctx, ev.StreamID); err != nil {
					return err
				}
				streams[ev.StreamID] = st
			}
			if s := e.senders[st.Transport.Kind]; s != nil && s.Wants(st) {
				ds = append(ds, domain.Delivery{EventID: ev.ID, EventSeq: ev.Seq, StreamID: ev.StreamID, Kind: st.Transport.Kind})
			}
		}
		if len(ds) > 0 {
			if err := e.st.EnqueueDeliveries(ctx, e.opts.Cursor, next, ds); err != nil {
				return err
			}
		}
		e.cursor = next
		if len(evs) < e.opts.BatchSize {
			return nil
		}
	}
}

// AttemptLease is the shortest a claimed attempt holds its delivery:
// longer than any sender lets one attempt run (30s), so that no other
// server sharing the database claims it again while it is being sent.
const AttemptLease = time.Minute

// attempt claims one delivery, sends it and records how it went. The
// claim is also when an attempt a crash cut short is tried again.
func (e *Engine) attempt(ctx context.Context, d domain.Delivery) error {
	now := e.opts.Now()
	d, err := e.st.ClaimDelivery(ctx, d.ID, now, now.Add(max(e.backoff(round(d)+1), AttemptLease)))
	if errors.Is(err, domain.ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	sender := e.senders[d.Kind]
	// The sender signs with the stream's secret, so it gets it decrypted.
	st, err := e.st.StreamWithSecrets(ctx, d.StreamID)
	if err != nil {
		return e.finish(ctx, d, now, 0, delivery.Outcome{Err: fmt.Errorf("load stream: %w", err), Permanent: errors.Is(err, domain.ErrNotFound)})
	}
	ev, err := e.st.GetEvent(ctx, d.EventID)
	if err != nil {
		return e.finish(ctx, d, now, 0, delivery.Outcome{Err: fmt.Errorf("load event: %w", err), Permanent: errors.Is(err, domain.ErrNotFound)})
	}
	start := e.opts.Now()
	out := sender.Send(ctx, st, ev, d.Attempts)
	if ctx.Err() != nil && out.Failed() {
		// Shutdown cut the attempt short: it counts, and is retried at
		// once by the next start.
		out = delivery.Outcome{Err: fmt.Errorf("interrupted by shutdown: %w", out.Err), RetryAfter: -1}
	}
	return e.finish(context.WithoutCancel(ctx), d, start, e.opts.Now().Sub(start), out)
}

// finish turns an Outcome into the delivery's next state.
func (e *Engine) finish(ctx context.Context, d domain.Delivery, start time.Time, took time.Duration, out delivery.Outcome) error {
	res := store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: d.Attempts, StartedAt: start, Duration: took, Status: out.Status},
		RemoteID: out.RemoteID}
	if out.Err != nil {
		res.Attempt.Error = out.Err.Error()
	}
	maxAttempts := int(e.st.IntSetting(ctx, delivery.MaxAttemptsSetting(d.Kind)))
	switch {
	case !out.Failed():
		res.Status = domain.DeliveryDelivered
	case out.Disable:
		res.Status, res.DisableStream = domain.DeliveryDisabled, true
	case out.Permanent || round(d) >= maxAttempts:
		res.Status = domain.DeliveryFailed
	default:
		res.Status = domain.DeliveryPending
		res.NextAttemptAt = e.opts.Now().Add(e.retryDelay(round(d), out.RetryAfter))
	}
	e.logAttempt(d, res, maxAttempts)
	return e.st.FinishDelivery(ctx, d.ID, res)
}

// round is how many attempts a delivery has made since an operator last
// sent it again (retry_delivery), or in all: the budget of attempts and
// the backoff count from there, while the log numbers every attempt.
func round(d domain.Delivery) int { return d.Attempts - d.RetriedAfter }

// logAttempt writes the one server-log line of an attempt and reports
// it. Senders keep secrets out of their errors (a bot token in a URL is
// replaced).
func (e *Engine) logAttempt(d domain.Delivery, res store.DeliveryResult, maxAttempts int) {
	a := res.Attempt
	log := e.log.With("delivery", d.ID, "event", d.EventID, "stream", d.StreamID, "kind", d.Kind, "attempt", a.Attempt,
		"status", a.Status, "duration", a.Duration.Round(time.Millisecond))
	outcome := "retry"
	switch res.Status {
	case domain.DeliveryDelivered:
		outcome = "delivered"
		log.Info("delivery attempt", "outcome", outcome)
	case domain.DeliveryDisabled:
		outcome = "disabled"
		log.Warn("delivery attempt", "outcome", outcome, "err", a.Error, "note", "endpoint disabled: every later delivery on the stream is skipped")
	case domain.DeliveryFailed:
		outcome = "failed"
		log.Warn("delivery attempt", "outcome", outcome, "err", a.Error, "max_attempts", maxAttempts)
	default:
		log.Info("delivery attempt", "outcome", outcome, "err", a.Error, "next", res.NextAttemptAt)
	}
	if e.opts.OnAttempt != nil {
		e.opts.OnAttempt(d.Kind, outcome)
	}
}

// retryDelay honours a remote's Retry-After (capped at MaxDelay), else
// backs off. A negative retryAfter means "at once".
func (e *Engine) retryDelay(attempt int, retryAfter time.Duration) time.Duration {
	switch {
	case retryAfter < 0:
		return 0
	case retryAfter > 0:
		return min(retryAfter, e.opts.MaxDelay)
	}
	return e.backoff(attempt)
}

// backoff is the jittered wait after the given (1-based) failed attempt.
func (e *Engine) backoff(attempt int) time.Duration {
	d := e.opts.BaseDelay
	for i := 1; i < attempt && d < e.opts.MaxDelay; i++ {
		d *= 2
	}
	return e.opts.Jitter(min(d, e.opts.MaxDelay))
}

package outbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/delivery"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// sent is one call a fakeSender received.
type sent struct {
	Stream, Event, Body string
	Attempt             int
}

// fakeSender records its calls and answers with scripted outcomes, then
// success. It wants webhook streams whose config has an outbound_url.
type fakeSender struct {
	mu       sync.Mutex
	calls    []sent
	outcomes []delivery.Outcome
	// block, when set, makes Send wait for ctx to end and fail.
	block bool
	// got is signalled (non-blocking) after every call.
	got chan struct{}
}

func newFake(outcomes ...delivery.Outcome) *fakeSender {
	return &fakeSender{outcomes: outcomes, got: make(chan struct{}, 100)}
}

func (f *fakeSender) Kind() domain.TransportKind { return kindHook }

func (f *fakeSender) Wants(st domain.Stream) bool {
	var c hookConfig
	return json.Unmarshal(st.Transport.Config, &c) == nil && c.OutboundURL != ""
}

// kindHook is a stand-in transport kind: the engine knows kinds only
// through their senders.
const kindHook domain.TransportKind = "webhook"

type hookConfig struct {
	OutboundURL string `json:"outbound_url"`
}

var hookTransports = domain.NewTransports(domain.TransportSpec{Kind: kindHook, Publish: true, Check: func(raw json.RawMessage) error {
	var c hookConfig
	return domain.DecodeConfig(raw, &c)
}})

func (f *fakeSender) Send(ctx context.Context, st domain.Stream, ev domain.Event, attempt int) delivery.Outcome {
	f.mu.Lock()
	f.calls = append(f.calls, sent{Stream: st.ID, Event: ev.ID, Body: ev.Message.Body, Attempt: attempt})
	var out delivery.Outcome
	if len(f.outcomes) > 0 {
		out, f.outcomes = f.outcomes[0], f.outcomes[1:]
	}
	block := f.block
	f.mu.Unlock()
	f.got <- struct{}{}
	if block {
		<-ctx.Done()
		return delivery.Outcome{Err: ctx.Err()}
	}
	return out
}

func (f *fakeSender) sent() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.calls...)
}

// rig is a store with an org that has a webhook stream with an outbound
// URL (s-out), one without (s-in) and a local stream (s-local), and a
// human worker w-maya who publishes.
type rig struct {
	st    *store.Store
	clock *storetest.Clock
}

func newRig(t *testing.T) rig {
	t.Helper()
	clock := storetest.NewClock(t0)
	return seedRig(t, storetest.NewWith(t, store.Options{Now: clock.Now, Transports: hookTransports}), clock)
}

// seedRig writes the rig's org into st, whose clock is clock.
func seedRig(t *testing.T, st *store.Store, clock *storetest.Clock) rig {
	t.Helper()
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	must(t)(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-a", Title: "A", Content: "a"}))
	must(t)(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-a", RoleID: "r-a", Title: "A"}))
	must(t)(st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Maya"}, nil))
	for _, s := range []domain.Stream{
		{ID: "s-out", Name: "out", Transport: domain.Transport{Kind: kindHook, Config: json.RawMessage(`{"outbound_url":"https://example.com/hook"}`)}},
		{ID: "s-out2", Name: "out2", Transport: domain.Transport{Kind: kindHook, Config: json.RawMessage(`{"outbound_url":"https://example.com/other"}`)}},
		{ID: "s-in", Name: "in", Transport: domain.Transport{Kind: kindHook}},
		{ID: "s-local", Name: "local", Transport: domain.Transport{Kind: domain.TransportLocal}},
	} {
		must(t)(st.CreateStream(ctx, "w-owner", s))
	}
	return rig{st: st, clock: clock}
}

// must fails the test on a setup error, for one-line setup calls.
func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// publish appends an event as source ("" is an inbound, system event).
func (r rig) publish(t *testing.T, stream, source, body string) domain.Event {
	t.Helper()
	ev, err := r.st.Append(t.Context(), domain.Event{StreamID: stream, Source: source, Message: domain.Message{Body: body}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// engine builds an engine on the rig's clock with no jitter: the nth retry
// waits exactly 1s·2^(n-1).
func (r rig) engine(s delivery.Sender) *outbox.Engine {
	return outbox.New(r.st, []delivery.Sender{s}, outbox.Options{Now: r.clock.Now, BaseDelay: time.Second, MaxDelay: time.Minute,
		Jitter: func(d time.Duration) time.Duration { return d }})
}

func step(t *testing.T, e *outbox.Engine) {
	t.Helper()
	if err := e.Step(t.Context()); err != nil {
		t.Fatalf("step: %v", err)
	}
}

func deliveries(t *testing.T, st *store.Store) []domain.Delivery {
	t.Helper()
	ds, err := st.ListDeliveries(t.Context(), store.DeliveryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// summary is the part of a delivery a table states.
type summary struct {
	Stream   string
	Status   domain.DeliveryStatus
	Attempts int
	Codes    []int
}

func summarise(ds []domain.Delivery) []summary {
	var out []summary
	for i := len(ds) - 1; i >= 0; i-- { // oldest first
		d := ds[i]
		s := summary{Stream: d.StreamID, Status: d.Status, Attempts: d.Attempts}
		for _, a := range d.Log {
			s.Codes = append(s.Codes, a.Status)
		}
		out = append(out, s)
	}
	return out
}

func TestEngineSelectsWhatGoesOut(t *testing.T) {
	r := newRig(t)
	f := newFake()
	r.publish(t, "s-out", "w-maya", "from a worker")
	r.publish(t, "s-out", "", "inbound: never echoed back out")
	r.publish(t, "s-in", "w-maya", "no outbound_url")
	r.publish(t, "s-local", "w-maya", "local stream")
	r.publish(t, "s-out2", "w-owner", "from the owner")
	e := r.engine(f)
	step(t, e)
	step(t, e) // a second pass adds nothing

	want := []sent{{Stream: "s-out", Body: "from a worker", Attempt: 1}, {Stream: "s-out2", Body: "from the owner", Attempt: 1}}
	// Attempts run concurrently, so they arrive in any order.
	byStream := cmpopts.SortSlices(func(a, b sent) bool { return a.Stream < b.Stream })
	if diff := cmp.Diff(want, f.sent(), cmpIgnoreEvent, byStream); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	wantDs := []summary{{"s-out", domain.DeliveryDelivered, 1, []int{0}}, {"s-out2", domain.DeliveryDelivered, 1, []int{0}}}
	if diff := cmp.Diff(wantDs, summarise(deliveries(t, r.st))); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
}

var cmpIgnoreEvent = cmp.Transformer("noEvent", func(s sent) sent { s.Event = ""; return s })

// TestEngineRetries steps a clock through the backoff: nothing is tried
// before it is due, and each outcome leads to the right next state.
func TestEngineRetries(t *testing.T) {
	fail := func(code int) delivery.Outcome {
		return delivery.Outcome{Err: errors.New("HTTP " + strconv.Itoa(code)), Status: code}
	}
	tests := []struct {
		name        string
		maxAttempts string
		outcomes    []delivery.Outcome
		// waits are how far the clock moves before each further step.
		waits []time.Duration
		want  summary
		// wantLog is in the server log's line of the last attempt.
		wantLog string
	}{
		{
			name:     "fails twice then succeeds: delivered once",
			outcomes: []delivery.Outcome{fail(500), fail(502), {Status: 200}},
			waits:    []time.Duration{time.Second, 2 * time.Second},
			want:     summary{"s-out", domain.DeliveryDelivered, 3, []int{500, 502, 200}},
			wantLog:  `level=INFO msg="delivery attempt" component=delivery delivery=1 event=`,
		},
		{
			name:     "not retried before its backoff is up",
			outcomes: []delivery.Outcome{fail(500), {Status: 200}},
			waits:    []time.Duration{999 * time.Millisecond},
			want:     summary{"s-out", domain.DeliveryPending, 1, []int{500}},
			wantLog:  `stream=s-out kind=webhook attempt=1 status=500 duration=0s outcome=retry err="HTTP 500" next=2026-03-04T10:00:01.000Z`,
		},
		{
			name:     "Retry-After replaces the backoff",
			outcomes: []delivery.Outcome{{Err: errors.New("busy"), Status: 429, RetryAfter: 30 * time.Second}, {Status: 200}},
			waits:    []time.Duration{29 * time.Second, time.Second},
			want:     summary{"s-out", domain.DeliveryDelivered, 2, []int{429, 200}},
			wantLog:  `attempt=2 status=200 duration=0s outcome=delivered`,
		},
		{
			name:        "given up after max_attempts",
			maxAttempts: "3",
			outcomes:    []delivery.Outcome{fail(500), fail(500), fail(500), {Status: 200}},
			waits:       []time.Duration{time.Second, 2 * time.Second, time.Hour},
			want:        summary{"s-out", domain.DeliveryFailed, 3, []int{500, 500, 500}},
			wantLog:     `level=WARN msg="delivery attempt" component=delivery delivery=1 event=`,
		},
		{
			name:     "a permanent failure is not retried",
			outcomes: []delivery.Outcome{{Err: errors.New("refused"), Permanent: true}, {Status: 200}},
			waits:    []time.Duration{time.Hour},
			want:     summary{"s-out", domain.DeliveryFailed, 1, []int{0}},
			wantLog:  `attempt=1 status=0 duration=0s outcome=failed err=refused max_attempts=`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			if tt.maxAttempts != "" {
				if err := r.st.SetSetting(t.Context(), delivery.MaxAttemptsSetting(kindHook), tt.maxAttempts); err != nil {
					t.Fatal(err)
				}
			}
			f := newFake(tt.outcomes...)
			var logs bytes.Buffer // Step waits for its attempts
			e := outbox.New(r.st, []delivery.Sender{f}, outbox.Options{Now: r.clock.Now, BaseDelay: time.Second, MaxDelay: time.Minute,
				Jitter: func(d time.Duration) time.Duration { return d }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			r.publish(t, "s-out", "w-maya", "hello")
			step(t, e)
			for _, w := range tt.waits {
				r.clock.Advance(w)
				step(t, e)
			}
			ds := deliveries(t, r.st)
			if diff := cmp.Diff([]summary{tt.want}, summarise(ds)); diff != "" {
				t.Errorf("deliveries (-want +got):\n%s", diff)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("server log lacks %s:\n%s", tt.wantLog, logs.String())
			}
			if n := len(f.sent()); n != tt.want.Attempts {
				t.Errorf("Send called %d times, want %d", n, tt.want.Attempts)
			}
			for i, c := range f.sent() {
				if c.Attempt != i+1 {
					t.Errorf("call %d got attempt %d", i, c.Attempt)
				}
			}
		})
	}
}

// TestEngineDisable: a 410 stops the stream's endpoint, for pending and
// later events alike, and leaves other streams alone.
func TestEngineDisable(t *testing.T) {
	r := newRig(t)
	f := newFake(delivery.Outcome{Err: errors.New("gone"), Status: 410, Disable: true})
	e := outbox.New(r.st, []delivery.Sender{f}, outbox.Options{Now: r.clock.Now, Concurrency: 1})
	r.publish(t, "s-out", "w-maya", "first")
	step(t, e)
	r.publish(t, "s-out", "w-maya", "second")
	r.publish(t, "s-out2", "w-maya", "elsewhere")
	step(t, e)

	want := []summary{
		{"s-out", domain.DeliveryDisabled, 1, []int{410}},
		{"s-out", domain.DeliveryDisabled, 0, nil},
		{"s-out2", domain.DeliveryDelivered, 1, []int{0}},
	}
	if diff := cmp.Diff(want, summarise(deliveries(t, r.st))); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if got, _ := r.st.DisabledEndpoints(t.Context()); !cmp.Equal(got, []string{"s-out"}) {
		t.Errorf("disabled endpoints = %v, want [s-out]", got)
	}
}

// TestEngineRestart: a new engine over the same store (a restart) picks
// up the pending retry at its stored time and never re-enqueues.
func TestEngineRestart(t *testing.T) {
	r := newRig(t)
	first := newFake(delivery.Outcome{Err: errors.New("down"), Status: 503})
	r.publish(t, "s-out", "w-maya", "hello")
	step(t, r.engine(first))

	second := newFake()
	e2 := r.engine(second)
	step(t, e2)
	if n := len(second.sent()); n != 0 {
		t.Fatalf("restarted engine sent %d times before the retry was due", n)
	}
	r.clock.Advance(time.Second)
	step(t, e2)
	want := []summary{{"s-out", domain.DeliveryDelivered, 2, []int{503, 0}}}
	if diff := cmp.Diff(want, summarise(deliveries(t, r.st))); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if cur, _ := r.st.DeliveryCursor(t.Context(), "outbound"); cur == 0 {
		t.Error("cursor was not stored")
	}
}

// TestEngineCrashMidAttempt: an attempt claimed but never finished (the
// process died) counts, and is retried when its lease runs out.
func TestEngineCrashMidAttempt(t *testing.T) {
	r := newRig(t)
	ev := r.publish(t, "s-out", "w-maya", "hello")
	ctx := t.Context()
	if err := r.st.EnqueueDeliveries(ctx, "outbound", ev.Seq, []domain.Delivery{{EventID: ev.ID, EventSeq: ev.Seq, StreamID: "s-out", Kind: kindHook}}); err != nil {
		t.Fatal(err)
	}
	d := deliveries(t, r.st)[0]
	if _, err := r.st.ClaimDelivery(ctx, d.ID, r.clock.Now(), r.clock.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.ClaimDelivery(ctx, d.ID, r.clock.Now(), r.clock.Now().Add(time.Second)); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second claim: err = %v, want ErrConflict", err)
	}
	f := newFake()
	e := r.engine(f)
	step(t, e)
	if len(f.sent()) != 0 {
		t.Fatal("sent while the crashed attempt's lease was still running")
	}
	r.clock.Advance(time.Second)
	step(t, e)
	if diff := cmp.Diff([]sent{{Stream: "s-out", Body: "hello", Attempt: 2}}, f.sent(), cmpIgnoreEvent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}

// TestEngineRun: the loop delivers on commit without being stepped, and on
// shutdown records the attempt it cut short as due at once.
func TestEngineRun(t *testing.T) {
	r := newRig(t)
	f := newFake()
	e := outbox.New(r.st, []delivery.Sender{f}, outbox.Options{Now: r.clock.Now})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	r.publish(t, "s-out", "w-maya", "one")
	waitFor(t, f.got)
	f.mu.Lock()
	f.block = true
	f.mu.Unlock()
	r.publish(t, "s-out", "w-maya", "two")
	waitFor(t, waitCalls(f, 2))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	ds := deliveries(t, r.st)
	want := []summary{{"s-out", domain.DeliveryDelivered, 1, []int{0}}, {"s-out", domain.DeliveryPending, 1, []int{0}}}
	if diff := cmp.Diff(want, summarise(ds)); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if cut := ds[0]; cut.NextAttemptAt == nil || cut.NextAttemptAt.After(r.clock.Now()) || cut.Log[0].Error == "" {
		t.Errorf("cut-short attempt = %+v, want due now with an error recorded", cut)
	}
}

// waitCalls returns a channel closed once f has been called n times.
func waitCalls(f *fakeSender, n int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for range f.got {
			if len(f.sent()) >= n {
				close(c)
				return
			}
		}
	}()
	return c
}

func waitFor[T any](t *testing.T, c <-chan T) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
}

func TestBackoffSchedule(t *testing.T) {
	r := newRig(t)
	var fails []delivery.Outcome
	for range 6 {
		fails = append(fails, delivery.Outcome{Err: errors.New("down")})
	}
	f := newFake(fails...)
	e := outbox.New(r.st, []delivery.Sender{f}, outbox.Options{Now: r.clock.Now, BaseDelay: time.Second, MaxDelay: 10 * time.Second,
		Jitter: func(d time.Duration) time.Duration { return d }})
	r.publish(t, "s-out", "w-maya", "hello")
	step(t, e)
	var got []time.Duration
	for range 5 {
		d := deliveries(t, r.st)[0]
		wait := d.NextAttemptAt.Sub(r.clock.Now())
		got = append(got, wait)
		r.clock.Advance(wait)
		step(t, e)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// archiveRig is a store on a stopped clock with the owner's webhook
// stream s-hook, which w-maya and the AI worker w-echo follow, and
// w-maya's own local stream s-maya. w-maya is a member and w-ada an
// admin, both holding create_stream; w-lee holds nothing.
type archiveRig struct {
	st    *store.Store
	clock *storetest.Clock
}

func newArchiveRig(t *testing.T) archiveRig {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWith(t, store.Options{Now: clock.Now, Transports: testTransports})
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Bootstrap(ctx, []string{"create_stream"}))
	must(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-a", Title: "A", Content: "a"}))
	must(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-a", RoleID: "r-a", Title: "A"}))
	for _, w := range []domain.Worker{
		{ID: "w-maya", Kind: domain.WorkerHuman, Name: "Maya"}, {ID: "w-ada", Kind: domain.WorkerHuman, Name: "Ada"},
		{ID: "w-lee", Kind: domain.WorkerHuman, Name: "Lee"}, {ID: "w-echo", Kind: domain.WorkerAI, Name: "Echo"},
	} {
		w.PositionID = "p-a"
		var grants []string
		if w.ID == "w-maya" || w.ID == "w-ada" {
			grants = []string{"create_stream"}
		}
		must(st.HireWorker(ctx, store.OwnerWorker, w, grants))
	}
	must(st.SetOrgRole(ctx, store.OwnerWorker, "w-ada", domain.RoleAdmin))
	must(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-hook", Name: "hook",
		Transport: domain.Transport{Kind: kindWebhook, Config: json.RawMessage(`{"outbound_url":"https://a.example/in"}`)}}))
	must(st.CreateStream(ctx, "w-maya", domain.Stream{ID: "s-maya", Name: "maya", Transport: domain.Transport{Kind: domain.TransportLocal}}))
	must(st.Subscribe(ctx, "", "s-hook", "w-maya", "w-echo"))
	return archiveRig{st: st, clock: clock}
}

// lastChange is the last change on s-org.
func lastChange(t *testing.T, st *store.Store) store.Change {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	if err != nil || len(evs) == 0 {
		t.Fatalf("s-org: %v", err)
	}
	var c store.Change
	if err := json.Unmarshal(evs[len(evs)-1].Message.Extra, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestArchiveStream: a stream's creator, an admin or the operator
// archives it — who may update it — and the act is on s-org with who
// followed it; anyone else, or a stream the system keeps, is refused,
// leaving it in use and the trail as it was.
func TestArchiveStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		actor   string
		id      string
		wantErr string
		wantIs  error
	}{
		{name: "its creator", actor: "w-maya", id: "s-maya"},
		{name: "an admin, another's stream", actor: "w-ada", id: "s-hook"},
		{name: "the owner", actor: store.OwnerWorker, id: "s-hook"},
		{name: "the operator", actor: "", id: "s-hook"},
		{name: "a member, another's stream", actor: "w-maya", id: "s-hook",
			wantErr: "w-maya may not archive s-hook: only its creator (w-owner) or an admin may", wantIs: domain.ErrForbidden},
		{name: "without create_stream", actor: "w-lee", id: "s-hook",
			wantErr: "w-lee may not archive s-hook: it holds no live create_stream grant", wantIs: domain.ErrForbidden},
		{name: "an AI worker, another's stream", actor: "w-echo", id: "s-hook", wantErr: "w-echo may not archive s-hook", wantIs: domain.ErrForbidden},
		{name: "an unknown stream", actor: store.OwnerWorker, id: "s-nope", wantErr: `stream "s-nope": not found`, wantIs: domain.ErrNotFound},
		{name: "the audit trail", actor: "", id: domain.StreamOrg,
			wantErr: "id: s-org is the org's audit trail, which the system keeps; it cannot be archived", wantIs: domain.ErrInvalid},
		{name: "a DM", actor: "", id: "s-dm-w-echo-w-maya", wantErr: "id: s-dm-w-echo-w-maya is a DM stream", wantIs: domain.ErrInvalid},
		{name: "an activation log", actor: "", id: "s-activations-w-echo", wantErr: "a worker's activation log, which the system writes; it cannot be archived", wantIs: domain.ErrInvalid},
		{name: "an inbox", actor: "", id: "s-inbox-w-echo", wantErr: "a worker's inbox, which only the system writes; it cannot be archived", wantIs: domain.ErrInvalid},
		{name: "a contact stream", actor: "", id: "s-contact-w-maya", wantErr: "a person's contact stream", wantIs: domain.ErrInvalid},
		{name: "a spec task's stream", actor: "", id: "s-task-t-a", wantErr: "(archive_stream archives only streams made with create_stream)", wantIs: domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newArchiveRig(t)
			ctx := t.Context()
			seq0, _ := r.st.LastSeq(ctx)
			got, err := r.st.ArchiveStream(ctx, tt.actor, tt.id)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, tt.wantIs) {
					t.Fatalf("ArchiveStream = %v, want %v %q", err, tt.wantIs, tt.wantErr)
				}
				for _, id := range []string{"s-hook", "s-maya"} {
					if st, err := r.st.GetStream(ctx, id); err != nil || st.ArchivedAt != nil {
						t.Errorf("%s after a refused archive: archivedAt %v, %v; want it in use", id, st.ArchivedAt, err)
					}
				}
				if seq, _ := r.st.LastSeq(ctx); seq != seq0 {
					t.Errorf("a refused archive appended events: last seq %d → %d", seq0, seq)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ArchivedAt == nil || !got.ArchivedAt.Equal(r.clock.Now()) {
				t.Errorf("ArchiveStream = archivedAt %v, want %v", got.ArchivedAt, r.clock.Now())
			}
			read, err := r.st.GetStream(ctx, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, read); diff != "" {
				t.Errorf("GetStream after ArchiveStream (-archive +get):\n%s", diff)
			}
			c := lastChange(t, r.st)
			var after struct {
				ArchivedAt *time.Time `json:"archivedAt"`
				Members    []string   `json:"members"`
			}
			b, _ := json.Marshal(c.After)
			json.Unmarshal(b, &after)
			wantMembers := map[string][]string{"s-hook": {"w-echo", "w-maya"}, "s-maya": {}}[tt.id]
			if c.Action != "archive_stream" || c.Actor != tt.actor || c.Target != tt.id || after.ArchivedAt == nil || !slices.Equal(after.Members, wantMembers) {
				t.Errorf("last s-org change = %+v, want %q's archive_stream of %s with members %v", c, tt.actor, tt.id, wantMembers)
			}
		})
	}
}

// TestArchiveStreamTwice: archiving an archived stream answers it as it
// is, and the trail holds one archive_stream.
func TestArchiveStreamTwice(t *testing.T) {
	t.Parallel()
	r := newArchiveRig(t)
	ctx := t.Context()
	first, err := r.st.ArchiveStream(ctx, "w-maya", "s-maya")
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := r.st.LastSeq(ctx)
	r.clock.Advance(time.Hour)
	again, err := r.st.ArchiveStream(ctx, "w-maya", "s-maya")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("archiving again changed the stream (-first +again):\n%s", diff)
	}
	if after, _ := r.st.LastSeq(ctx); after != seq {
		t.Errorf("archiving again appended events: last seq %d → %d", seq, after)
	}
	evs, err := r.st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Message.Subject == "archive_stream s-maya" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("s-org holds %d archive_stream events of s-maya, want 1", n)
	}
	// Who may not archive it may not learn it is archived by trying.
	if _, err := r.st.ArchiveStream(ctx, "w-lee", "s-maya"); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("w-lee archiving the archived s-maya = %v, want forbidden", err)
	}
}

// TestArchivedStreamTakesNothing: once archived, every way onto a stream
// — a worker's publish, an inbound message, a processor's output — and
// every new subscriber is refused naming the stream and that it is
// archived, and wakes no one; its followers stay and read its history;
// it is left out of ListStreams unless asked for.
func TestArchivedStreamTakesNothing(t *testing.T) {
	t.Parallel()
	r := newArchiveRig(t)
	ctx := t.Context()
	st := r.st
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-in", Name: "in", Transport: domain.Transport{Kind: domain.TransportLocal}}))
	must(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-out", Name: "out", Transport: domain.Transport{Kind: domain.TransportLocal}}))
	must(st.CreateProcessor(ctx, store.OwnerWorker, domain.Processor{ID: "proc-copy", Input: "s-in", Kind: "filter", Config: json.RawMessage(`{}`), Outputs: []string{"s-out"}}))
	before, err := st.Append(ctx, domain.Event{StreamID: "s-hook", Source: "w-maya", Message: domain.Message{Body: "before"}}, store.AppendOptions{})
	must(before, err)
	must(st.Append(ctx, domain.Event{StreamID: "s-in", Source: "w-maya", Message: domain.Message{Body: "in"}}, store.AppendOptions{}))
	work, err := st.PendingWork(ctx, 10)
	if err != nil || len(work) != 1 {
		t.Fatalf("pending processor work = %v, %v; want proc-copy's one", work, err)
	}
	must(st.ArchiveStream(ctx, store.OwnerWorker, "s-hook"))
	must(st.ArchiveStream(ctx, store.OwnerWorker, "s-out"))
	triggers0, _ := st.PendingTriggers(ctx)
	seq0, _ := st.LastSeq(ctx)

	refusals := []struct {
		name      string
		do        func() error
		wantField string
		// workFault: the processor failed, not the database.
		workFault bool
	}{
		{"a worker's publish", func() error {
			_, err := st.Append(ctx, domain.Event{StreamID: "s-hook", Source: "w-maya", Message: domain.Message{Body: "after"}}, store.AppendOptions{})
			return err
		}, "stream: s-hook is archived", false},
		{"an inbound message", func() error {
			_, err := st.AppendInbound(ctx, []domain.Inbound{{StreamID: "s-hook", Message: domain.Message{Body: "from outside"}, Key: "k1"}}, 0)
			return err
		}, "stream: s-hook is archived", false},
		{"a new subscriber", func() error { _, err := st.Subscribe(ctx, "", "s-hook", "w-lee"); return err }, "stream: s-hook is archived", false},
		{"a worker subscribing itself", func() error { _, err := st.Subscribe(ctx, "w-lee", "s-hook", "w-lee"); return err }, "stream: s-hook is archived", false},
		{"a processor's output written", func() error {
			return st.CompleteWork(ctx, work[0], []domain.ProcessorOutput{{Stream: "s-out", Message: domain.Message{Body: "copy"}}})
		}, "stream: s-out is archived", true},
		{"a new processor reading it", func() error {
			_, err := st.CreateProcessor(ctx, store.OwnerWorker, domain.Processor{Input: "s-hook", Kind: "filter", Config: json.RawMessage(`{}`), Outputs: []string{"s-x"}})
			return err
		}, "input: s-hook is archived", false},
		{"a new processor writing it", func() error {
			_, err := st.CreateProcessor(ctx, store.OwnerWorker, domain.Processor{Input: "s-in", Kind: "filter", Config: json.RawMessage(`{}`), Outputs: []string{"s-out"}})
			return err
		}, "outputs[0]: s-out is archived", false},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !errors.Is(err, domain.ErrGone) || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("err = %v, want invalid and gone, containing %q", err, tt.wantField)
			}
			if tt.workFault && !store.IsWorkFault(err) {
				t.Errorf("err = %v is not counted as the processor's failure", err)
			}
		})
	}
	if seq, _ := st.LastSeq(ctx); seq != seq0 {
		t.Errorf("refused writes appended events: last seq %d → %d", seq0, seq)
	}
	if n, _ := st.PendingTriggers(ctx); n != triggers0 {
		t.Errorf("pending triggers %d → %d: a refused write woke someone", triggers0, n)
	}

	t.Run("whoever could follow it reads its history without following it", func(t *testing.T) {
		streams, err := st.ReadableStreams(ctx, "w-lee", []string{"s-hook"})
		if err != nil {
			t.Fatalf("w-lee, no member, reading s-hook: %v", err)
		}
		if evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: streams}); err != nil || len(evs) != 1 || evs[0].ID != before.ID {
			t.Errorf("w-lee reads %v, %v on s-hook; want the event from before", evs, err)
		}
	})
	t.Run("a private one only its members", func(t *testing.T) {
		must(st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-board", Name: "board", Private: true, Transport: domain.Transport{Kind: domain.TransportLocal}}))
		must(st.Subscribe(ctx, store.OwnerWorker, "s-board", "w-maya"))
		must(st.ArchiveStream(ctx, store.OwnerWorker, "s-board"))
		if _, err := st.ReadableStreams(ctx, "w-maya", []string{"s-board"}); err != nil {
			t.Errorf("w-maya, a member, reading the archived private s-board: %v", err)
		}
		_, err := st.ReadableStreams(ctx, "w-lee", []string{"s-board"})
		if !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), "s-board is private and archived: only its members read it") {
			t.Errorf("w-lee reading the archived private s-board = %v, want forbidden", err)
		}
	})
	t.Run("its followers stay and read its history", func(t *testing.T) {
		members, err := st.StreamMembers(ctx, "s-hook")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range members {
			ids = append(ids, m.WorkerID)
		}
		if !slices.Equal(ids, []string{"w-echo", "w-maya"}) {
			t.Errorf("members of s-hook = %v, want w-echo and w-maya still", ids)
		}
		for _, w := range []string{"w-echo", "w-maya"} {
			streams, err := st.ReadableStreams(ctx, w, []string{"s-hook"})
			if err != nil {
				t.Fatalf("%s reading s-hook: %v", w, err)
			}
			evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: streams})
			if err != nil || len(evs) != 1 || evs[0].ID != before.ID {
				t.Errorf("%s reads %v, %v on s-hook; want the event from before", w, evs, err)
			}
		}
	})
	t.Run("listed only when asked", func(t *testing.T) {
		ids := func(ss []domain.Stream, err error) []string {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range ss {
				if s.ID == "s-hook" || s.ID == "s-maya" || s.ID == "s-out" {
					out = append(out, s.ID)
				}
			}
			return out
		}
		if got := ids(st.ListStreams(ctx, "")); !slices.Equal(got, []string{"s-maya"}) {
			t.Errorf("ListStreams = %v, want s-maya alone", got)
		}
		if got := ids(st.ListStreams(ctx, kindWebhook)); got != nil {
			t.Errorf("ListStreams of webhooks = %v, want none: no transport routes to an archived stream", got)
		}
		if got := ids(st.ListAllStreams(ctx, "")); !slices.Equal(got, []string{"s-hook", "s-maya", "s-out"}) {
			t.Errorf("ListAllStreams = %v, want the archived ones too", got)
		}
	})
}

// TestArchiveStreamParksDeliveries: what an archived stream had not sent
// is never sent — pending deliveries are disabled saying why, where an
// operator lists them; one in flight is not tried again; an event
// published before but read by the outbox after is parked too — and none
// can be sent again. What was delivered or failed stays as it was.
func TestArchiveStreamParksDeliveries(t *testing.T) {
	t.Parallel()
	r := newArchiveRig(t)
	ctx := t.Context()
	st := r.st
	publish := func(body string) domain.Event {
		t.Helper()
		ev, err := st.Append(ctx, domain.Event{StreamID: "s-hook", Source: "w-maya", Message: domain.Message{Body: body}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	enqueue := func(ev domain.Event) int64 {
		t.Helper()
		if err := st.EnqueueDeliveries(ctx, "c", ev.Seq, []domain.Delivery{{EventID: ev.ID, EventSeq: ev.Seq, StreamID: "s-hook", Kind: kindWebhook}}); err != nil {
			t.Fatal(err)
		}
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
		if err != nil || len(ds) != 1 {
			t.Fatalf("the delivery of %s: %v, %v", ev.ID, ds, err)
		}
		return ds[0].ID
	}
	attempt := func(id int64) domain.Delivery {
		t.Helper()
		now := r.clock.Now()
		d, err := st.ClaimDelivery(ctx, id, now, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	finish := func(d domain.Delivery, status domain.DeliveryStatus) {
		t.Helper()
		res := store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: d.Attempts, StartedAt: r.clock.Now(), Status: 503, Error: "remote answered 503"}, Status: status}
		if status == domain.DeliveryPending {
			res.NextAttemptAt = r.clock.Now().Add(time.Minute)
		}
		if err := st.FinishDelivery(ctx, d.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	failed := enqueue(publish("failed"))
	finish(attempt(failed), domain.DeliveryFailed)
	waiting := enqueue(publish("waiting"))
	retrying := enqueue(publish("retrying"))
	finish(attempt(retrying), domain.DeliveryPending)
	inFlight := attempt(enqueue(publish("in flight")))
	unread := publish("not read by the outbox yet")

	if _, err := st.ArchiveStream(ctx, store.OwnerWorker, "s-hook"); err != nil {
		t.Fatal(err)
	}
	if c := lastChange(t, st); !strings.Contains(string(mustJSON(t, c.After)), `"parkedDeliveries":3`) {
		t.Errorf("archive_stream audit = %s, want the 3 pending deliveries counted as parked", mustJSON(t, c.After))
	}
	finish(inFlight, domain.DeliveryPending)
	parkedLate := enqueue(unread)

	tests := []struct {
		name    string
		id      int64
		want    domain.DeliveryStatus
		wantErr string
	}{
		{"a failed delivery stays failed", failed, domain.DeliveryFailed, "remote answered 503"},
		{"a waiting delivery is parked", waiting, domain.DeliveryDisabled, "the stream is archived"},
		{"a delivery waiting to retry is parked", retrying, domain.DeliveryDisabled, "the stream is archived"},
		{"one in flight is not tried again", inFlight.ID, domain.DeliveryDisabled, "the stream is archived"},
		{"an event the outbox reads after is parked", parkedLate, domain.DeliveryDisabled, "the stream is archived"},
	}
	all, err := st.ListDeliveries(ctx, store.DeliveryQuery{StreamID: "s-hook"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(all, func(d domain.Delivery) bool { return d.ID == tt.id })
			if i < 0 {
				t.Fatalf("delivery %d is not listed", tt.id)
			}
			if d := all[i]; d.Status != tt.want || d.LastError != tt.wantErr || d.NextAttemptAt != nil {
				t.Errorf("delivery %d = %s (%q, next %v), want %s (%q), not due", d.ID, d.Status, d.LastError, d.NextAttemptAt, tt.want, tt.wantErr)
			}
			if _, err := st.RetryDelivery(ctx, store.OwnerWorker, tt.id); !errors.Is(err, domain.ErrConflict) || !strings.Contains(err.Error(), "stream s-hook is archived") {
				t.Errorf("RetryDelivery(%d) = %v, want a conflict saying s-hook is archived", tt.id, err)
			}
		})
	}
	if _, err := st.RetryFailedDeliveries(ctx, store.OwnerWorker, "s-hook", 0); !errors.Is(err, domain.ErrConflict) || !strings.Contains(err.Error(), "stream s-hook is archived") {
		t.Errorf("RetryFailedDeliveries = %v, want a conflict saying s-hook is archived", err)
	}
	due, err := st.DueDeliveries(ctx, []domain.TransportKind{kindWebhook}, r.clock.Now().Add(time.Hour), 10)
	if err != nil || len(due) != 0 {
		t.Errorf("due deliveries an hour on = %v, %v; want none", due, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArchivedStreamIsNotInherited: a hire takes over the streams its
// position's last worker followed, but not one archived since, which
// takes no new member.
func TestArchivedStreamIsNotInherited(t *testing.T) {
	t.Parallel()
	r := newArchiveRig(t)
	ctx := t.Context()
	st := r.st
	if _, err := st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-live", Name: "live", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscribe(ctx, "", "s-live", "w-maya"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ArchiveStream(ctx, store.OwnerWorker, "s-hook"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DismissWorker(ctx, store.OwnerWorker, "w-maya"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-sam", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Sam"}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := st.SubscribedStreams(ctx, "w-sam")
	if err != nil || !slices.Equal(got, []string{"s-live"}) {
		t.Errorf("w-sam follows %v, %v; want s-live, not the archived s-hook", got, err)
	}
}

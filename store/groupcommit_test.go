package store_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// outcome is what one write returned to its caller.
type outcome struct {
	err      error
	panicked any
}

// inOneBatch queues writes, in order, behind a held write lock, then
// releases them: they commit together as one batch. It returns each
// caller's outcome and checks that exactly one commit happened.
func inOneBatch(t *testing.T, st *store.Store, writes ...func() error) []outcome {
	t.Helper()
	release := st.HoldWrites()
	out := make([]outcome, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() {
			defer func() { out[i].panicked = recover() }()
			out[i].err = w()
		})
		// Wait for this write to queue before starting the next, so the
		// batch runs them in the order given.
		for st.QueuedWrites() < i+1 {
			runtime.Gosched()
		}
	}
	_, before := st.CommitStats()
	release()
	wg.Wait()
	if _, after := st.CommitStats(); after-before != 1 {
		t.Errorf("%d writes took %d commits, want 1", len(writes), after-before)
	}
	return out
}

func appendBody(ctx context.Context, st *store.Store, stream, body string, into *domain.Event) func() error {
	return func() error {
		ev, err := st.Append(ctx, domain.Event{StreamID: stream, Message: domain.Message{Body: body}}, store.AppendOptions{})
		*into = ev
		return err
	}
}

func streamBodies(t *testing.T, st *store.Store, stream string) []string {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return bodies(evs)
}

// TestGroupCommitFailuresStayAlone: in one batch, writes that fail — a
// missing stream, an error after changing a row, a panic, a cancelled
// caller — fail alone; their batch-mates commit, in order, and nothing
// of the failed ones is left behind.
func TestGroupCommitFailuresStayAlone(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var first, last, missing, late domain.Event
	out := inOneBatch(t, st,
		appendBody(ctx, st, "s-a", "first", &first),
		appendBody(ctx, st, "s-missing", "nowhere", &missing),
		func() error {
			return st.Write(ctx, func(tx *gorm.DB) error {
				if err := tx.Exec("UPDATE streams SET name = 'clobbered' WHERE id = 's-a'").Error; err != nil {
					return err
				}
				return errors.New("boom after an update")
			})
		},
		func() error {
			return st.Write(ctx, func(tx *gorm.DB) error {
				tx.Exec("UPDATE streams SET name = 'clobbered' WHERE id = 's-a'")
				panic("kaboom")
			})
		},
		appendBody(cancelled, st, "s-a", "cancelled", &late),
		appendBody(ctx, st, "s-a", "last", &last),
	)
	tests := []struct {
		name    string
		got     outcome
		wantErr error  // errors.Is
		text    string // in the error or the panic
	}{
		{name: "first append", got: out[0]},
		{name: "append to a missing stream", got: out[1], wantErr: domain.ErrNotFound, text: `stream "s-missing"`},
		{name: "error after an update", got: out[2], text: "boom after an update"},
		{name: "panic after an update", got: out[3], text: "kaboom"},
		{name: "cancelled caller", got: out[4], wantErr: context.Canceled},
		{name: "last append", got: out[5]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.got.err
			if tt.got.panicked != nil {
				got = fmt.Errorf("panic: %v", tt.got.panicked)
			}
			switch {
			case tt.wantErr == nil && tt.text == "":
				if got != nil {
					t.Fatalf("got %v, want success", got)
				}
			case got == nil:
				t.Fatalf("succeeded, want an error with %q", tt.text)
			case tt.wantErr != nil && !errors.Is(got, tt.wantErr):
				t.Errorf("got %v, want %v", got, tt.wantErr)
			case !strings.Contains(got.Error(), tt.text):
				t.Errorf("got %v, want it to say %q", got, tt.text)
			}
		})
	}
	if first.Seq == 0 || last.Seq <= first.Seq {
		t.Errorf("seqs %d then %d, want increasing in arrival order", first.Seq, last.Seq)
	}
	if got := streamBodies(t, st, "s-a"); strings.Join(got, ",") != "first,last" {
		t.Errorf("s-a holds %q, want [first last]", got)
	}
	s, err := st.GetStream(ctx, "s-a")
	if err != nil || s.Name != "a" {
		t.Errorf("stream s-a named %q (%v), want its update rolled back to \"a\"", s.Name, err)
	}
}

// TestGroupCommitSeesEarlierWrites: a write sees what those before it in
// its batch wrote, though none is committed yet — the stream created just
// before, the inbound delivery stored just before under the same key.
func TestGroupCommitSeesEarlierWrites(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	var ev domain.Event
	receipts := make([][]domain.Receipt, 2)
	inbound := func(i int) func() error {
		return func() error {
			var err error
			receipts[i], err = st.AppendInbound(ctx, []domain.Inbound{{StreamID: "s-a", Key: "delivery-1", Message: domain.Message{Body: "hook"}}}, 0)
			return err
		}
	}
	out := inOneBatch(t, st,
		func() error {
			_, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-new", Name: "new", Transport: domain.Transport{Kind: domain.TransportLocal}})
			return err
		},
		appendBody(ctx, st, "s-new", "into the new stream", &ev),
		inbound(0),
		inbound(1),
	)
	for i, o := range out {
		if o.err != nil || o.panicked != nil {
			t.Fatalf("write %d: %v %v", i, o.err, o.panicked)
		}
	}
	if got := streamBodies(t, st, "s-new"); len(got) != 1 {
		t.Errorf("s-new holds %q, want the one append", got)
	}
	if r := receipts[1][0]; !r.Duplicate || r.Event.ID != receipts[0][0].Event.ID {
		t.Errorf("second delivery: duplicate=%v event %s, want the first's event %s", r.Duplicate, r.Event.ID, receipts[0][0].Event.ID)
	}
	if got := streamBodies(t, st, "s-a"); len(got) != 1 {
		t.Errorf("s-a holds %q, want the delivery once", got)
	}
}

// TestGroupCommitLostTransaction: when SQLite ends the batch's transaction
// under it, the writes that ran in it fail — nothing of theirs is stored —
// and those not yet run commit in a new one.
func TestGroupCommitLostTransaction(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	var before, after domain.Event
	out := inOneBatch(t, st,
		appendBody(ctx, st, "s-a", "before", &before),
		func() error {
			return st.Write(ctx, func(tx *gorm.DB) error { return tx.Exec("ROLLBACK").Error })
		},
		appendBody(ctx, st, "s-a", "after", &after),
	)
	if err := out[0].err; err == nil || !strings.Contains(err.Error(), "transaction aborted") {
		t.Errorf("write before the loss: %v, want transaction aborted", err)
	}
	if out[1].err == nil {
		t.Error("the write that ended the transaction succeeded")
	}
	if out[2].err != nil {
		t.Errorf("write after the loss: %v, want it committed", out[2].err)
	}
	if got := streamBodies(t, st, "s-a"); strings.Join(got, ",") != "after" {
		t.Errorf("s-a holds %q, want [after]", got)
	}
}

// TestConcurrentAppends: clients append at once, with and without group
// commit. Every acknowledged event is stored once with its trigger, each
// client's events have increasing seqs, a read returns them in seq order,
// and a reader following the stream by cursor meanwhile misses none —
// commits never land out of seq order. Without group commit each write
// is its own commit.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	const clients, perClient = 8, 40
	for _, noGroup := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoGroupCommit=%v", noGroup), func(t *testing.T) {
			st := storetest.NewWith(t, store.Options{NoGroupCommit: noGroup})
			seed(t, st)
			ctx := t.Context()
			if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-a", Name: "bot"}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Subscribe(ctx, "", "s-a", "w-bot"); err != nil {
				t.Fatal(err)
			}
			writes0, commits0 := st.CommitStats()
			pending0, err := st.PendingTriggers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			followCtx, stopFollowing := context.WithCancel(ctx)
			defer stopFollowing()
			followed := make(chan []int64, 1)
			go func() { followed <- follow(followCtx, st, "s-a", clients*perClient) }()
			seqs := make([][]int64, clients)
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					for i := range perClient {
						ev, err := st.Append(ctx, domain.Event{StreamID: "s-a", Message: domain.Message{Body: fmt.Sprintf("%d/%d", c, i)}}, store.AppendOptions{})
						if err != nil {
							t.Errorf("client %d append %d: %v", c, i, err)
							return
						}
						// Another connection sees it at once: it was committed
						// before the caller was answered.
						if _, err := st.GetEvent(ctx, ev.ID); err != nil {
							t.Errorf("client %d append %d answered before its commit: %v", c, i, err)
						}
						seqs[c] = append(seqs[c], ev.Seq)
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				stopFollowing()
			}
			writes, commits := st.CommitStats()
			writes, commits = writes-writes0, commits-commits0
			t.Logf("%d writes in %d commits", writes, commits)
			if writes != clients*perClient {
				t.Errorf("%d writes counted, want %d", writes, clients*perClient)
			}
			if noGroup && commits != writes {
				t.Errorf("without group commit: %d commits for %d writes", commits, writes)
			}
			acked := map[int64]bool{}
			for c, s := range seqs {
				for i, seq := range s {
					if i > 0 && seq <= s[i-1] {
						t.Errorf("client %d: seq %d after %d", c, seq, s[i-1])
					}
					acked[seq] = true
				}
			}
			var stored []int64
			for since := int64(0); ; {
				evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-a"}, Since: since})
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) == 0 {
					break
				}
				for _, ev := range evs {
					if ev.Seq <= since {
						t.Fatalf("read seq %d after %d", ev.Seq, since)
					}
					since = ev.Seq
					stored = append(stored, ev.Seq)
				}
			}
			if got := <-followed; !slices.Equal(got, stored) {
				t.Errorf("a reader following by cursor saw %d events, %d stored: a commit came out of seq order", len(got), len(stored))
			}
			if len(stored) != len(acked) {
				t.Errorf("%d events stored, %d acknowledged", len(stored), len(acked))
			}
			for _, seq := range stored {
				if !acked[seq] {
					t.Errorf("stored seq %d was never acknowledged", seq)
				}
			}
			if n, err := st.PendingTriggers(ctx); err != nil || n-pending0 != clients*perClient {
				t.Errorf("%d new pending triggers (%v), want one per event: %d", n-pending0, err, clients*perClient)
			}
		})
	}
}

// follow reads a stream as a long-poll does — by cursor, waking on
// commits — until it has seen n events, and returns their seqs.
func follow(ctx context.Context, st *store.Store, stream string, n int) []int64 {
	var seen []int64
	var since int64
	for len(seen) < n {
		changed := st.Changed()
		evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{stream}, Since: since})
		if err != nil {
			return seen
		}
		for _, ev := range evs {
			seen, since = append(seen, ev.Seq), ev.Seq
		}
		if len(evs) == 0 {
			select {
			case <-changed:
			case <-ctx.Done():
				return seen
			}
		}
	}
	return seen
}

// TestGroupCommitBoundsBatches: 65 writes queued at once commit in two
// transactions, so the first of a burst never waits on all the others.
func TestGroupCommitBoundsBatches(t *testing.T) {
	t.Parallel()
	const writes = 65
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	release := st.HoldWrites()
	errs := make(chan error, writes)
	for i := range writes {
		go func() {
			_, err := st.Append(ctx, domain.Event{StreamID: "s-a", Message: domain.Message{Body: fmt.Sprint(i)}}, store.AppendOptions{})
			errs <- err
		}()
	}
	for st.QueuedWrites() < writes {
		runtime.Gosched()
	}
	_, before := st.CommitStats()
	release()
	for range writes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, after := st.CommitStats(); after-before != 2 {
		t.Errorf("%d queued writes took %d commits, want 2 (64, then 1)", writes, after-before)
	}
}

// TestCommitPerWriteFailuresUndo: without group commit, a write that
// fails or panics is rolled back and lets the next write in (a panic
// must not leave SQLite's write lock held).
func TestCommitPerWriteFailuresUndo(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{NoGroupCommit: true})
	seed(t, st)
	ctx := t.Context()
	clobber := func(tx *gorm.DB) { tx.Exec("UPDATE streams SET name = 'clobbered' WHERE id = 's-a'") }
	if err := st.Write(ctx, func(tx *gorm.DB) error { clobber(tx); return errors.New("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failing write = %v, want boom", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Errorf("panic = %v, want kaboom", p)
			}
		}()
		st.Write(ctx, func(tx *gorm.DB) error { clobber(tx); panic("kaboom") })
	}()
	var after domain.Event
	done := make(chan error, 1)
	go func() { done <- appendBody(ctx, st, "s-a", "after", &after)() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("append after the failures: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append after a panicked write still waiting after 10 s: the write lock was left held")
	}
	s, err := st.GetStream(ctx, "s-a")
	if err != nil || s.Name != "a" {
		t.Errorf("stream s-a = %q, %v; want its name a, the failed writes undone", s.Name, err)
	}
}

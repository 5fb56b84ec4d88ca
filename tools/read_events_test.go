package tools

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type readOut struct {
	Events []domain.Event `json:"events"`
	Cursor int64          `json:"cursor"`
}

// bodies lists the bodies of a read, oldest first.
func bodies(r readOut) []string {
	out := []string{}
	for _, ev := range r.Events {
		out = append(out, ev.Message.Body)
	}
	return out
}

func TestReadEvents(t *testing.T) {
	publishTo := func(stream string, bodies ...string) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			for _, b := range bodies {
				mustCall[any](t, f.env, "publish", map[string]any{"stream": stream, "body": b})
			}
		}
	}
	mayaFollowsInbox := func(t *testing.T, f fixture) {
		must(t)(f.env.Store.Subscribe(t.Context(), "", "s-inbox", "w-maya"))
		must(t)(f.env.Store.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-other", Name: "other", Transport: domain.Transport{Kind: domain.TransportLocal}}))
		publishTo("s-inbox", "one", "two")(t, f)
		publishTo("s-other", "elsewhere")(t, f)
	}
	mayaFollowsBoth := func(t *testing.T, f fixture) {
		mayaFollowsInbox(t, f)
		f.follow(t, "w-maya", "s-other")
	}
	runTable(t, "read_events", []toolCase[readOut]{
		{
			name:    "a named stream you do not follow is refused",
			setup:   mayaFollowsInbox,
			caller:  "w-maya",
			args:    map[string]any{"streams": []string{"s-inbox", "s-other"}},
			wantErr: []string{"w-maya is not subscribed to s-other; subscribe to it first"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "the owner too reads only what it follows",
			args:    map[string]any{"streams": []string{"s-inbox"}},
			wantErr: []string{"w-owner is not subscribed to s-inbox"},
			wantIs:  domain.ErrForbidden,
		},
		{
			name:    "unknown stream",
			args:    map[string]any{"streams": []string{"s-inbox", "s-nope"}},
			wantErr: []string{`stream "s-nope": not found`},
			wantIs:  domain.ErrNotFound,
		},
		{
			name:    "negative wait",
			args:    map[string]any{"wait": -1},
			wantErr: []string{"wait: must be between 0 and 60 seconds"},
		},
		{
			name:    "wait over the cap",
			args:    map[string]any{"wait": 61},
			wantErr: []string{"wait: must be between 0 and 60 seconds"},
		},
		{
			name:    "limit over the cap",
			args:    map[string]any{"limit": 501},
			wantErr: []string{"limit: must be between 1 and 500"},
		},
		{
			name:    "negative limit",
			args:    map[string]any{"limit": -1},
			wantErr: []string{"limit: must be between 1 and 500"},
		},
	})

	// Successful reads compare bodies: ids and seqs are the store's to pick.
	reads := []struct {
		name   string
		setup  func(t *testing.T, f fixture)
		caller string
		args   map[string]any
		want   []string
	}{
		{name: "the streams you follow when none are named", setup: mayaFollowsInbox, caller: "w-maya", want: []string{"one", "two"}},
		{name: "following nothing reads nothing", caller: "w-maya", want: []string{}},
		{name: "named streams, oldest first across them", setup: mayaFollowsBoth, caller: "w-maya",
			args: map[string]any{"streams": []string{"s-other", "s-inbox"}}, want: []string{"one", "two", "elsewhere"}},
		{name: "limit keeps the oldest", setup: mayaFollowsInbox, caller: "w-maya", args: map[string]any{"limit": 1}, want: []string{"one"}},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			got := mustCall[readOut](t, f.as(tc.caller), "read_events", tc.args)
			if diff := cmp.Diff(tc.want, bodies(got)); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
			wantCursor := int64(0)
			if n := len(got.Events); n > 0 {
				wantCursor = got.Events[n-1].Seq
			}
			if got.Cursor != wantCursor {
				t.Errorf("cursor = %d, want %d (the last event's seq)", got.Cursor, wantCursor)
			}
		})
	}
}

// TestReadEventsCursor pages through a stream: each read's cursor, passed
// back as since, returns exactly what came after it, and a read with
// nothing new keeps the cursor where it was.
func TestReadEventsCursor(t *testing.T) {
	f := newFixture(t)
	f.follow(t, store.OwnerWorker, "s-inbox")
	read := func(since int64, limit int) readOut {
		t.Helper()
		return mustCall[readOut](t, f.env, "read_events", map[string]any{"streams": []string{"s-inbox"}, "since": since, "limit": limit})
	}
	var seqs []int64
	for _, b := range []string{"e1", "e2", "e3"} {
		ev := mustCall[domain.Event](t, f.env, "publish", map[string]any{"stream": "s-inbox", "body": b})
		seqs = append(seqs, ev.Seq)
	}
	steps := []struct {
		name       string
		since      int64
		limit      int
		wantBodies []string
		wantCursor int64
	}{
		{"first page", 0, 2, []string{"e1", "e2"}, seqs[1]},
		{"next page from the cursor", seqs[1], 2, []string{"e3"}, seqs[2]},
		{"nothing new keeps the cursor", seqs[2], 2, []string{}, seqs[2]},
		{"since is exclusive", seqs[0], 0, []string{"e2", "e3"}, seqs[2]},
	}
	for _, s := range steps {
		got := read(s.since, s.limit)
		if diff := cmp.Diff(s.wantBodies, bodies(got)); diff != "" {
			t.Errorf("%s: bodies (-want +got):\n%s", s.name, diff)
		}
		if got.Cursor != s.wantCursor {
			t.Errorf("%s: cursor = %d, want %d", s.name, got.Cursor, s.wantCursor)
		}
	}
}

// TestReadEventsLongPoll runs in a synctest bubble: synctest.Wait returns
// only once the reader is blocked waiting, so the publish is known to land
// after the wait began, and the bubble's fake clock makes the timeout case
// instant.
func TestReadEventsLongPoll(t *testing.T) {
	t.Run("returns when an event lands", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFixture(t)
			f.follow(t, store.OwnerWorker, "s-inbox")
			since := lastSeq(t, f.env.Store)
			done := readAsync(f.env, map[string]any{"streams": []string{"s-inbox"}, "since": since, "wait": 30})
			synctest.Wait()
			select {
			case r := <-done:
				t.Fatalf("read returned %+v before anything was published", r)
			default:
			}
			start := time.Now()
			ev := mustCall[domain.Event](t, f.env, "publish", map[string]any{"stream": "s-inbox", "body": "wake up"})
			got := receive(t, done)
			if diff := cmp.Diff([]string{"wake up"}, bodies(got)); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
			if got.Cursor != ev.Seq {
				t.Errorf("cursor = %d, want %d", got.Cursor, ev.Seq)
			}
			if waited := time.Since(start); waited != 0 {
				t.Errorf("read returned %v after the publish, want at once", waited)
			}
		})
	})
	t.Run("a write elsewhere does not end the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFixture(t)
			f.follow(t, store.OwnerWorker, "s-inbox")
			since := lastSeq(t, f.env.Store)
			done := readAsync(f.env, map[string]any{"streams": []string{"s-inbox"}, "since": since, "wait": 30})
			synctest.Wait()
			mustCall[any](t, f.env, "create_role", map[string]any{"title": "Noise"})
			synctest.Wait()
			select {
			case r := <-done:
				t.Fatalf("read returned %+v after an unrelated write", r)
			default:
			}
			mustCall[any](t, f.env, "publish", map[string]any{"stream": "s-inbox", "body": "now"})
			if diff := cmp.Diff([]string{"now"}, bodies(receive(t, done))); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("the org stopping ends the wait, empty", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFixture(t)
			f.follow(t, store.OwnerWorker, "s-inbox")
			since := lastSeq(t, f.env.Store)
			draining := make(chan struct{})
			f.env.Draining = draining
			done := readAsync(f.env, map[string]any{"streams": []string{"s-inbox"}, "since": since, "wait": 60})
			synctest.Wait()
			start := time.Now()
			close(draining)
			got := receive(t, done)
			if len(got.Events) != 0 || got.Cursor != since {
				t.Errorf("read = %d events, cursor %d; want none and cursor %d", len(got.Events), got.Cursor, since)
			}
			if waited := time.Since(start); waited != 0 {
				t.Errorf("read returned %v after the org stopped, want at once", waited)
			}
		})
	})
	t.Run("times out empty with the cursor unchanged", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFixture(t)
			f.follow(t, store.OwnerWorker, "s-inbox")
			since := lastSeq(t, f.env.Store)
			start := time.Now()
			got := mustCall[readOut](t, f.env, "read_events", map[string]any{"streams": []string{"s-inbox"}, "since": since, "wait": 5})
			if len(got.Events) != 0 || got.Cursor != since {
				t.Errorf("read = %d events, cursor %d; want none and cursor %d", len(got.Events), got.Cursor, since)
			}
			if waited := time.Since(start); waited != 5*time.Second {
				t.Errorf("waited %v, want the full 5s", waited)
			}
		})
	})
}

type readResult struct {
	out readOut
	err error
}

// readAsync starts read_events on its own goroutine. It reports through the
// channel rather than t, which only the test goroutine may stop.
func readAsync(env *Env, args map[string]any) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		tool, _ := toolNamed("read_events")
		raw, _ := json.Marshal(args)
		out, err := tool.call(context.Background(), env, raw)
		var r readResult
		if err == nil {
			b, _ := json.Marshal(out)
			err = json.Unmarshal(b, &r.out)
		}
		r.err = err
		done <- r
	}()
	return done
}

func receive(t *testing.T, done <-chan readResult) readOut {
	t.Helper()
	r := <-done
	if r.err != nil {
		t.Fatalf("read_events: %v", r.err)
	}
	return r.out
}

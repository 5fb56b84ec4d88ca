package store_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestReadEventsSeesEveryAppend: a page read again after events were
// appended — by the same store, or by another process on the database —
// has them, whether they are on the streams read or elsewhere, and a
// full page stays what it was.
func TestReadEventsSeesEveryAppend(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	if _, err := server.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s-a", "s-b"} {
		if _, err := server.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: id, Name: id, Transport: domain.Transport{Kind: "local"}}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	appendTo := func(st *store.Store, stream string) {
		t.Helper()
		n++
		if _, err := st.Append(ctx, domain.Event{StreamID: stream, Source: store.OwnerWorker,
			Message: domain.Message{From: store.OwnerWorker, Body: fmt.Sprintf("body %d", n)}}, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(q store.EventQuery) []string {
		t.Helper()
		evs, err := server.ReadEvents(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for i := range evs {
			bodies = append(bodies, evs[i].Message.Body)
			evs[i].Message.Body = "changed by a caller" // never seen by the next read
		}
		return bodies
	}
	short := store.EventQuery{StreamIDs: []string{"s-a"}, Limit: 10}
	full := store.EventQuery{StreamIDs: []string{"s-a"}, Limit: 2}
	steps := []struct {
		name        string
		do          func()
		short, full []string
	}{
		{"first", func() { appendTo(cli, "s-a"); appendTo(cli, "s-a") }, []string{"body 1", "body 2"}, []string{"body 1", "body 2"}},
		{"again", func() {}, []string{"body 1", "body 2"}, []string{"body 1", "body 2"}},
		{"another process appends", func() { appendTo(cli, "s-a") }, []string{"body 1", "body 2", "body 3"}, []string{"body 1", "body 2"}},
		{"this store appends", func() { appendTo(server, "s-a") }, []string{"body 1", "body 2", "body 3", "body 4"}, []string{"body 1", "body 2"}},
		{"another stream", func() { appendTo(cli, "s-b") }, []string{"body 1", "body 2", "body 3", "body 4"}, []string{"body 1", "body 2"}},
	}
	for _, step := range steps {
		step.do()
		if diff := cmp.Diff(step.short, read(short)); diff != "" {
			t.Errorf("%s: short page (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.full, read(full)); diff != "" {
			t.Errorf("%s: full page (-want +got):\n%s", step.name, diff)
		}
	}
}

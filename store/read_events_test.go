package store_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestReadEventsReturnsWhatWasAppended: a page read back holds every
// event as Append returned it — every envelope field, text that JSON
// escapes, the time to the store's precision, the cursor order — on
// whichever store the suite runs (SQLite hands the page over as one JSON
// array, PostgreSQL as rows).
func TestReadEventsReturnsWhatWasAppended(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	msgs := []domain.Message{
		{Body: "plain"},
		{From: "w-owner", To: []string{"w-a", "w-b"}, Subject: "Ünïcode & <tags> \"quoted\"", Body: "line one\nline two\t\u2028 😀 \\ back",
			ThreadID: "th-1", InReplyTo: "m-0", MessageID: "m-1", BodyContentType: "text/markdown",
			Attachments: []domain.Attachment{{Name: "a.txt", ContentType: "text/plain", Size: 12, Ref: "att-1"}},
			Extra:       json.RawMessage(`{"n":12345678901234567,"f":1.5,"nested":{"list":[true,null,"<&>"]}}`)},
	}
	var want []domain.Event
	for _, m := range msgs {
		ev, err := st.Append(ctx, domain.Event{StreamID: "s-a", Message: m}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
	}
	got, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-a"}, Since: want[0].Seq - 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if !jsonEqual(t, w.Message.Extra, g.Message.Extra) {
			t.Errorf("event %d extra = %s, want %s", i, g.Message.Extra, w.Message.Extra)
		}
		w.Message.Extra, g.Message.Extra = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("event %d read back as\n%+v\nwant\n%+v", i, g, w)
		}
	}
	if empty, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-a"}, Since: want[len(want)-1].Seq}); err != nil || len(empty) != 0 {
		t.Errorf("after the last event: %v, %v; want none", empty, err)
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

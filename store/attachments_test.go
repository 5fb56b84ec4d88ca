package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func TestAppendInbound(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	msg := domain.Message{Body: "see attached", MessageID: "<m1@x>", ThreadID: "<m1@x>",
		Attachments: []domain.Attachment{{Name: "a.txt", ContentType: "text/plain"}, {Name: "b.bin"}}}
	in := domain.Inbound{StreamID: "s-a", Message: msg, Key: "pm-1", Contents: [][]byte{[]byte("hello"), {0, 1}}}
	ev, dup, err := appendOne(ctx, st, in)
	if err != nil || dup {
		t.Fatalf("append: %v dup=%v", err, dup)
	}
	if msg.Attachments[0].Ref != "" {
		t.Error("AppendInbound changed the caller's attachments")
	}
	var sizes []int64
	for _, a := range ev.Message.Attachments {
		f, err := st.Attachment(ctx, a.Ref)
		if err != nil {
			t.Fatalf("attachment %s: %v", a.Ref, err)
		}
		if f.EventID != ev.ID || f.StreamID != "s-a" || f.Attachment != a {
			t.Errorf("stored attachment %+v, want %+v of %s", f, a, ev.ID)
		}
		sizes = append(sizes, f.Size)
	}
	if diff := cmp.Diff([]int64{5, 2}, sizes); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}

	again, dup, err := appendOne(ctx, st, in)
	if err != nil || !dup || again.ID != ev.ID || again.Message.Attachments[0].Ref != ev.Message.Attachments[0].Ref {
		t.Errorf("repeat: %v dup=%v %+v", err, dup, again)
	}

	cases := []struct {
		name     string
		ev       domain.Event
		contents [][]byte
		want     error
	}{
		{"contents do not match attachments", domain.Event{StreamID: "s-a", Message: msg}, [][]byte{nil}, domain.ErrInvalid},
		{"unknown stream stores no file", domain.Event{StreamID: "s-nope", Message: msg}, [][]byte{[]byte("x"), nil}, domain.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := st.LastSeq(ctx)
			if _, _, err := appendOne(ctx, st, domain.Inbound{StreamID: tc.ev.StreamID, Message: tc.ev.Message, Key: "pm-x", Contents: tc.contents}); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if after, _ := st.LastSeq(ctx); after != before {
				t.Error("a failed append stored an event")
			}
		})
	}
	if _, err := st.Attachment(ctx, "att-nope"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown attachment: %v", err)
	}
}

func TestLatestInbound(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	in := func(id, thread string) domain.Event {
		ev, _, err := appendOne(ctx, st, domain.Inbound{StreamID: "s-a", Message: domain.Message{Body: id, MessageID: id, ThreadID: thread}, Key: id})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	first, second, other := in("<1@x>", "<1@x>"), in("<2@x>", "<1@x>"), in("<3@x>", "<3@x>")
	// A worker's message on the same thread is never the one answered.
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "mine", MessageID: "<4@x>", ThreadID: "<1@x>"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		messageID, thread string
		want              string
	}{
		{"by message id", "<1@x>", "", first.ID},
		{"latest of a thread", "", "<1@x>", second.ID},
		{"another thread", "", "<3@x>", other.ID},
		{"latest on the stream", "", "", other.ID},
		{"a worker's message is not inbound", "<4@x>", "", ""},
		{"unknown", "<9@x>", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := st.LatestInbound(ctx, "s-a", tc.messageID, tc.thread)
			if tc.want == "" {
				if !errors.Is(err, domain.ErrNotFound) {
					t.Errorf("got %v, %v; want not found", ev.ID, err)
				}
				return
			}
			if err != nil || ev.ID != tc.want {
				t.Errorf("got %s, %v; want %s", ev.ID, err, tc.want)
			}
		})
	}
}

// appendOne stores one inbound message, as a transport does.
func appendOne(ctx context.Context, st *store.Store, in domain.Inbound) (domain.Event, bool, error) {
	rs, err := st.AppendInbound(ctx, []domain.Inbound{in}, 0)
	if err != nil {
		return domain.Event{}, false, err
	}
	return rs[0].Event, rs[0].Duplicate, nil
}

// TestAppendInboundIsOneTransaction: a batch either commits whole or not
// at all, so a transport answers one status for all of it.
func TestAppendInboundIsOneTransaction(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	before, _ := st.LastSeq(ctx)
	_, err := st.AppendInbound(ctx, []domain.Inbound{
		{StreamID: "s-a", Message: domain.Message{Body: "fine"}, Key: "k-1"},
		{StreamID: "s-a", Message: domain.Message{Body: "  "}, Key: "k-2"},
	}, 0)
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("batch with a blank body: %v, want ErrInvalid", err)
	}
	if after, _ := st.LastSeq(ctx); after != before {
		t.Errorf("a refused batch stored %d events", after-before)
	}
}

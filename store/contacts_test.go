package store_test

import (
	"cmp"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// kindChat stands in for a chat transport a human can be reached on
// (transports/slack, transports/telegram).
const kindChat domain.TransportKind = "chat"

var chatTransports = domain.NewTransports(domain.TransportSpec{Kind: kindChat, Publish: true,
	Check: func(raw json.RawMessage) error {
		var c struct {
			Chat string `json:"chat"`
		}
		return domain.DecodeConfig(raw, &c)
	},
	Contact: &domain.ContactSpec{Address: "a chat id", Stream: func(_, address string) (json.RawMessage, error) {
		return json.Marshal(map[string]string{"chat": address})
	}},
})

// TestChatAnswerFindsItsMessage: two messages relayed to a human's chat
// were delivered with remote ids; a reply that names one (inReplyTo or
// its thread) lands where that one came from, in its thread; a reply
// that names none, or an id nothing was delivered as, answers the last.
func TestChatAnswerFindsItsMessage(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: chatTransports})
	seed(t, st)
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Lee"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetContact(ctx, "w-owner", "w-lee", store.Contact{Kind: string(kindChat), Address: "42"}); err != nil {
		t.Fatal(err)
	}
	contact := store.ContactStreamPrefix + "w-lee"
	dm, err := st.EnsureDM(ctx, "w-owner", "w-lee")
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Append(ctx, domain.Event{StreamID: dm.ID, Source: "w-owner", Message: domain.Message{Body: "Refund order 7?", ThreadID: "refunds"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{To: []string{"w-lee"}, Body: "Close the month?"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deliver(t, st, contact, "1712345999.000001", "1712345999.000002")

	tests := []struct {
		name         string
		reply        domain.Message
		stream, want string // where the answer lands, in which thread
	}{
		{"in reply to the first", domain.Message{InReplyTo: "1712345999.000001", ThreadID: "1712345999.000001"}, dm.ID, "refunds"},
		{"in the second's thread", domain.Message{ThreadID: "1712345999.000002"}, "s-a", second.ID},
		{"in reply to the first again", domain.Message{InReplyTo: "1712345999.000001"}, dm.ID, "refunds"},
		{"naming nothing: the last", domain.Message{ThreadID: "1712346100.000100"}, "s-a", second.ID},
		{"naming what was never delivered: the last", domain.Message{InReplyTo: "1712340000.000009"}, "s-a", second.ID},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.reply.Body, tt.reply.From = tt.name, "U0LEE"
			rs, err := st.AppendInbound(ctx, []domain.Inbound{{StreamID: contact, Message: tt.reply, Key: "ev-" + string(rune('a'+i)),
				Sender: domain.Sender{Address: "42", How: "chat"}}}, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := answerTo(t, st, rs[0].Event.ID, dm.ID, "s-a")
			if got.StreamID != tt.stream || got.Message.ThreadID != tt.want || got.Source != "w-lee" || got.Message.Body != tt.name {
				t.Errorf("answer on %s thread %q from %s: %q; want on %s thread %q", got.StreamID, got.Message.ThreadID, got.Source, got.Message.Body, tt.stream, tt.want)
			}
			if parent := map[string]string{dm.ID: first.ID, "s-a": second.ID}[tt.stream]; got.Message.InReplyTo != parent {
				t.Errorf("answer inReplyTo %q, want %q", got.Message.InReplyTo, parent)
			}
		})
	}
}

// deliver records each relayed event on stream as delivered, with the
// remote ids in order, as the delivery engine does.
func deliver(t *testing.T, st *store.Store, stream string, remoteIDs ...string) {
	t.Helper()
	ctx := t.Context()
	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{stream}})
	if err != nil || len(evs) != len(remoteIDs) {
		t.Fatalf("%s holds %d events, %v; want %d", stream, len(evs), err, len(remoteIDs))
	}
	var ds []domain.Delivery
	for _, ev := range evs {
		ds = append(ds, domain.Delivery{EventID: ev.ID, EventSeq: ev.Seq, StreamID: stream, Kind: kindChat})
	}
	if err := st.EnqueueDeliveries(ctx, "outbound", evs[len(evs)-1].Seq, ds); err != nil {
		t.Fatal(err)
	}
	now := st.Now()
	due, err := st.DueDeliveries(ctx, []domain.TransportKind{kindChat}, now, 10)
	if err != nil || len(due) != len(remoteIDs) {
		t.Fatalf("due = %+v, %v", due, err)
	}
	for i, d := range due {
		if _, err := st.ClaimDelivery(ctx, d.ID, now, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		err := st.FinishDelivery(ctx, d.ID, store.DeliveryResult{Attempt: domain.DeliveryAttempt{Attempt: 1, Status: 200},
			Status: domain.DeliveryDelivered, RemoteID: remoteIDs[i]})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// answerTo is the event on one of streams the inbound event was relayed
// as.
func answerTo(t *testing.T, st *store.Store, inbound string, streams ...string) domain.Event {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: streams})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.CausedBy == inbound {
			return ev
		}
	}
	t.Fatalf("no answer caused by %s", inbound)
	return domain.Event{}
}

// TestRelayReachesWhomItConcerns: what a human on a channel is sent —
// their inbox, a message naming them or their position, their DMs — and
// what they are not: other traffic, what they said themselves.
func TestRelayReachesWhomItConcerns(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: chatTransports})
	seed(t, st)
	ctx := t.Context()
	for _, w := range []domain.Worker{
		{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Lee"},
		{ID: "w-kim", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Kim"},
	} {
		if _, err := st.HireWorker(ctx, "w-owner", w, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.SetContact(ctx, "w-owner", "w-lee", store.Contact{Kind: string(kindChat), Address: "42"}); err != nil {
		t.Fatal(err)
	}
	dm, err := st.EnsureDM(ctx, "w-owner", "w-lee")
	if err != nil {
		t.Fatal(err)
	}
	otherDM, err := st.EnsureDM(ctx, "w-owner", "w-kim")
	if err != nil {
		t.Fatal(err)
	}
	contact := store.ContactStreamPrefix + "w-lee"
	tests := []struct {
		name    string
		ev      domain.Event
		inbox   string // set: a notice to this worker's inbox, with ev's message
		relayed bool
	}{
		{"the inbox", domain.Event{Message: domain.Message{Body: "approve?"}}, "w-lee", true},
		{"to the worker", domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{To: []string{"w-lee"}, Body: "a"}}, "", true},
		{"to the position", domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{To: []string{"p-a"}, Body: "b"}}, "", true},
		{"a DM", domain.Event{StreamID: dm.ID, Source: "w-owner", Message: domain.Message{Body: "c"}}, "", true},
		{"another's DM", domain.Event{StreamID: otherDM.ID, Source: "w-owner", Message: domain.Message{Body: "d"}}, "", false},
		{"another's inbox", domain.Event{Message: domain.Message{Body: "e"}}, "w-kim", false},
		{"to someone else", domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{To: []string{"w-kim"}, Body: "f"}}, "", false},
		{"to nobody", domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "g"}}, "", false},
		{"what they said", domain.Event{StreamID: "s-a", Source: "w-lee", Message: domain.Message{To: []string{"w-lee"}, Body: "h"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{contact}})
			if err != nil {
				t.Fatal(err)
			}
			var ev domain.Event
			if tt.inbox != "" {
				ev, err = st.Notify(ctx, tt.inbox, tt.ev.Message, "")
			} else {
				ev, err = st.Append(ctx, tt.ev, store.AppendOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			after, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{contact}})
			if err != nil {
				t.Fatal(err)
			}
			relayed := len(after) == len(before)+1 && after[len(after)-1].CausedBy == ev.ID
			if relayed != tt.relayed || len(after) > len(before)+1 {
				t.Errorf("relayed = %v (%d events on %s, %d before), want %v", relayed, len(after), contact, len(before), tt.relayed)
			}
		})
	}
}

// TestContactAnswerNeedsItsSender: on a DM between two people on chat
// channels, what comes in on Lee's channel is Lee's answer only when the
// transport vouches for Lee's address; otherwise it lands unverified,
// from the address it claims. Either way Kim's channel gets it and Lee's
// does not.
func TestContactAnswerNeedsItsSender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		from    string
		sender  domain.Sender
		wantLee bool
	}{
		{"vouched for Lee's address", "U0LEE", domain.Sender{Address: "42", How: "chat"}, true},
		{"vouched for another address", "U0LEE", domain.Sender{Address: "43", How: "chat"}, false},
		{"vouched for no one", "U0LEE", domain.Sender{}, false},
		{"no address claimed", "", domain.Sender{}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storetest.NewWith(t, store.Options{Transports: chatTransports})
			seed(t, st)
			ctx := t.Context()
			for w, chat := range map[string]string{"w-lee": "42", "w-kim": "77"} {
				if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerHuman, PositionID: "p-a", Name: w}, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := st.SetContact(ctx, "w-owner", w, store.Contact{Kind: string(kindChat), Address: chat}); err != nil {
					t.Fatal(err)
				}
			}
			dm, err := st.EnsureDM(ctx, "w-kim", "w-lee")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Append(ctx, domain.Event{StreamID: dm.ID, Source: "w-kim", Message: domain.Message{Body: "Lunch?"}}, store.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			in := domain.Inbound{StreamID: store.ContactStreamPrefix + "w-lee", Message: domain.Message{From: tt.from, Body: "Yes."},
				Key: "k" + string(rune('a'+i)), Sender: tt.sender}
			rs, err := st.AppendInbound(ctx, []domain.Inbound{in}, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := answerTo(t, st, rs[0].Event.ID, dm.ID)
			if tt.wantLee {
				if got.Source != "w-lee" || got.Message.From != "w-lee" || got.Message.Body != "Yes." {
					t.Errorf("on the DM: %q from %q: %q; want Lee's answer", got.Source, got.Message.From, got.Message.Body)
				}
			} else if want := "Unverified sender " + cmp.Or(tt.from, "(no address)") + ", not shown to be w-lee:\n\nYes."; got.Source != "" ||
				got.SourceKind != domain.SourceSystem || got.Message.From != tt.from || got.Message.Body != want {
				t.Errorf("on the DM: %q (%s) from %q: %q; want no source, from %q: %q", got.Source, got.SourceKind, got.Message.From, got.Message.Body, tt.from, want)
			}
			for w, want := range map[string]bool{"w-kim": true, "w-lee": false} {
				evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{store.ContactStreamPrefix + w}})
				if err != nil {
					t.Fatal(err)
				}
				relayed := slices.ContainsFunc(evs, func(ev domain.Event) bool { return ev.CausedBy == got.ID })
				if relayed != want {
					t.Errorf("relayed to %s's channel: %v, want %v", w, relayed, want)
				}
			}
		})
	}
}

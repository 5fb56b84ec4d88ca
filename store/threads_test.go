package store_test

import (
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestOnThread: a stream is on a thread it holds an event of — inbound or
// a worker's, by threadId or as its first message — or that one of its
// events was delivered as; not on another stream's thread.
func TestOnThread(t *testing.T) {
	t.Parallel()
	st := storetest.NewWith(t, store.Options{Transports: chatTransports})
	seed(t, st)
	ctx := t.Context()
	_, err := st.AppendInbound(ctx, []domain.Inbound{
		{StreamID: "s-a", Message: domain.Message{Body: "in", MessageID: "1.1", ThreadID: "1.0"}, Key: "k1"},
		{StreamID: "s-a", Message: domain.Message{Body: "top", MessageID: "3.0", ThreadID: "3.0"}, Key: "k3"},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Body: "mine", ThreadID: "2.0"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-post", Name: "post", Transport: domain.Transport{Kind: kindChat}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-post", Source: "w-owner", Message: domain.Message{Body: "a post starting a thread"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	deliver(t, st, "s-post", "9.0")
	for _, tt := range []struct {
		name, stream, thread string
		want                 bool
	}{
		{"an inbound reply's thread", "s-a", "1.0", true},
		{"a worker's message in the thread", "s-a", "2.0", true},
		{"a top-level message is its own thread", "s-a", "3.0", true},
		{"a post delivered as the thread's first message", "s-post", "9.0", true},
		{"another stream's thread", "s-post", "1.0", false},
		{"a thread nobody joined", "s-a", "4.0", false},
		{"no thread", "s-a", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.OnThread(ctx, tt.stream, tt.thread)
			if err != nil || got != tt.want {
				t.Errorf("OnThread(%s, %q) = %v, %v; want %v", tt.stream, tt.thread, got, err, tt.want)
			}
		})
	}
}

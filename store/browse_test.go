package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func bodies(evs []domain.Event) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Message.Body)
	}
	return out
}

func TestEventsBefore(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-b", Name: "b", Transport: domain.Transport{Kind: domain.TransportLocal}})
	var seqs []int64
	for i := range 6 {
		stream, to := "s-a", []string(nil)
		if i%2 == 1 {
			stream = "s-b"
		}
		if i == 2 || i == 5 {
			to = []string{"w-maya", "x@example.com"}
		}
		ev, err := st.Append(ctx, domain.Event{StreamID: stream, Message: domain.Message{Body: fmt.Sprint("m", i), To: to}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	tests := []struct {
		name string
		q    store.PageQuery
		want []string
	}{
		{"newest first", store.PageQuery{StreamIDs: []string{"s-a", "s-b"}, Limit: 3}, []string{"m5", "m4", "m3"}},
		{"the next page", store.PageQuery{StreamIDs: []string{"s-a", "s-b"}, Before: seqs[3], Limit: 3}, []string{"m2", "m1", "m0"}},
		{"one stream", store.PageQuery{StreamIDs: []string{"s-b"}}, []string{"m5", "m3", "m1"}},
		{"addressed to a worker", store.PageQuery{StreamIDs: []string{"s-a", "s-b"}, To: "w-maya"}, []string{"m5", "m2"}},
		{"no streams", store.PageQuery{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := st.EventsBefore(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, bodies(evs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	after, err := st.EventsAfter(ctx, seqs[3], 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m4", "m5"}, bodies(after)); diff != "" {
		t.Errorf("EventsAfter (-want +got):\n%s", diff)
	}
}

func TestEventsBeforeAuditFilters(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st) // owner, r-a, p-a, s-a
	ctx := t.Context()
	st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-b", Title: "B"})
	content := "new"
	st.UpdateRole(ctx, "w-owner", "r-a", store.RoleUpdate{Content: &content})
	subjects := func(q store.PageQuery) []string {
		q.StreamIDs = []string{domain.StreamOrg}
		evs, err := st.EventsBefore(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, ev := range evs {
			var c store.Change
			json.Unmarshal(ev.Message.Extra, &c)
			out = append(out, c.Action+" "+c.Target)
		}
		return out
	}
	if diff := cmp.Diff([]string{"update_role r-a", "create_role r-a"}, subjects(store.PageQuery{Target: "r-a"})); diff != "" {
		t.Errorf("by target (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"create_role r-b", "create_role r-a", "create_role r-owner"}, subjects(store.PageQuery{Action: "create_role"})); diff != "" {
		t.Errorf("by action (-want +got):\n%s", diff)
	}
	if got := subjects(store.PageQuery{Actor: "w-owner", Action: "create_stream"}); !cmp.Equal(got, []string{"create_stream s-a"}) {
		t.Errorf("by actor and action = %v", got)
	}
}

func TestActivationsBrowse(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-a", Name: "Bot"}, nil); err != nil {
		t.Fatal(err)
	}
	// The hire trigger runs and fails; an event on s-a (followed by w-bot)
	// starts a second run that is still going.
	clock.Advance(time.Minute)
	first, _, _, err := st.Claim(ctx, "w-bot", "act-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	exitLog := domain.Event{StreamID: "s-activations-w-bot", CausedBy: "act-1", Message: domain.Message{Subject: "exit", Body: "exit 1"}}
	if err := st.FinishActivation(ctx, domain.Activation{ID: first.ID, Status: domain.ActivationFailed, Error: "boom"}, exitLog); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscribe(ctx, "w-owner", "s-a", "w-bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: domain.Message{Subject: "hi", Body: "wake"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if _, _, _, err := st.Claim(ctx, "w-bot", "act-2", time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct{ kind, tool string }{{"tool_call", "read_events"}, {"tool_result", "read_events"}, {"tool_call", "publish"}, {"assistant", ""}} {
		extra, _ := json.Marshal(map[string]string{"kind": e.kind, "tool": e.tool})
		st.Append(ctx, domain.Event{StreamID: "s-activations-w-bot", CausedBy: "act-2", Message: domain.Message{Subject: e.kind, Body: e.tool, Extra: extra}}, store.AppendOptions{})
	}

	ids := func(acts []domain.Activation) []string {
		out := []string{}
		for _, a := range acts {
			out = append(out, a.ID+" "+string(a.Status))
		}
		return out
	}
	all, err := st.ActivationsBefore(ctx, store.ActivationQuery{Workers: []string{"w-bot"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"act-2 running", "act-1 failed"}, ids(all)); diff != "" {
		t.Errorf("newest first (-want +got):\n%s", diff)
	}
	failed, _ := st.ActivationsBefore(ctx, store.ActivationQuery{Status: domain.ActivationFailed})
	running, _ := st.RunningActivations(ctx)
	older, _ := st.ActivationsBefore(ctx, store.ActivationQuery{Before: all[0].StartedAt})
	none, _ := st.ActivationsBefore(ctx, store.ActivationQuery{Workers: []string{}})
	for name, got := range map[string][]domain.Activation{"failed": failed, "running": running, "before act-2": older, "no workers": none} {
		want := map[string][]string{"failed": {"act-1 failed"}, "running": {"act-2 running"}, "before act-2": {"act-1 failed"}, "no workers": {}}[name]
		if diff := cmp.Diff(want, ids(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	trigs, err := st.ActivationTriggers(ctx, "act-2")
	if err != nil || len(trigs) != 1 || trigs[0].Event.Message.Subject != "hi" || trigs[0].Kind != domain.TriggerEvent {
		t.Errorf("ActivationTriggers(act-2) = %+v, %v; want the one event on s-a", trigs, err)
	}
	call, ok, err := st.LatestLogEntry(ctx, "w-bot", "act-2", domain.LogToolCall, domain.LogToolResult)
	if err != nil || !ok || call.Message.Body != "publish" {
		t.Errorf("LatestLogEntry = %q, %v, %v; want the publish call", call.Message.Body, ok, err)
	}
	if _, ok, err := st.LatestLogEntry(ctx, "w-bot", "act-1", domain.LogToolCall); ok || err != nil {
		t.Errorf("act-1 made no tool call, got ok=%v err=%v", ok, err)
	}
}

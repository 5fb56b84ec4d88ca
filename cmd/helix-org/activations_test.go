package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// recordActivation runs one activation of worker through the store as the
// dispatcher would, ending with status and the given token usage.
func recordActivation(t *testing.T, st *store.Store, worker string, status domain.ActivationStatus, in, out int64) {
	t.Helper()
	ctx := t.Context()
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-wake", Message: domain.Message{From: store.OwnerWorker, Body: "wake " + worker}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	act, _, _, err := st.Claim(ctx, worker, "a-"+domain.RandomSlug(8), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	act.Status, act.InputTokens, act.OutputTokens = status, in, out
	if status == domain.ActivationFailed {
		// As a run recorded before the reason was kept: it sits on the log.
		act.Error = "agent exited with status 1"
		logged := domain.Event{StreamID: domain.ActivationStreamPrefix + worker, CausedBy: act.ID,
			Message: domain.Message{From: worker, Subject: string(domain.LogError), Body: "upstream exploded"}}
		if _, err := st.Append(ctx, logged, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	exit := domain.Event{StreamID: domain.ActivationStreamPrefix + worker, Message: domain.Message{From: worker, Subject: "exit", Body: string(status)}}
	if err := st.FinishActivation(ctx, act, exit); err != nil {
		t.Fatal(err)
	}
}

func TestActivations(t *testing.T) {
	db := bootstrapped(t)
	st := openStore(t, db)
	if _, err := st.CreatePosition(t.Context(), store.OwnerWorker, domain.Position{ID: "p-agent", RoleID: store.OwnerRole, Title: "Agent"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-wake", Name: "wake", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"w-a", "w-b"} {
		if _, err := st.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: id, Kind: domain.WorkerAI, PositionID: "p-agent", Name: id}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Subscribe(t.Context(), store.OwnerWorker, "s-wake", id); err != nil {
			t.Fatal(err)
		}
	}
	recordActivation(t, st, "w-a", domain.ActivationSucceeded, 1000, 200) // the hire
	recordActivation(t, st, "w-b", domain.ActivationFailed, 50, 0)
	recordActivation(t, st, "w-a", domain.ActivationSucceeded, 300, 40)

	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "everyone", args: []string{"--db", db}, want: []string{
			"ACTIVATION", "IN TOKENS", "upstream exploded (agent exited with status 1)",
			"w-a     2            0       1300       240         1540",
			"w-b     1            1       50         0           50",
			"all     3            1       1350       240         1590"}},
		{name: "one worker", args: []string{"--db", db, "--worker", "w-b"}, want: []string{"w-b     1            1       50", "all     1"}},
		{name: "json", args: []string{"--db", db, "--worker", "w-a", "--json"}, want: []string{`"inputTokens": 1300`, `"outputTokens": 240`, `"status": "succeeded"`}},
		{name: "no activations", args: []string{"--db", bootstrapped(t)}, want: []string{"No activations yet."}},
		{name: "unknown worker", args: []string{"--db", db, "--worker", "w-nope"}, wantErr: `worker "w-nope": not found`},
		{name: "-o json", args: []string{"--db", db, "--worker", "w-b", "-o", "json"}, want: []string{`"workers": [`, `"failed": 1`,
			`"error": "upstream exploded (agent exited with status 1)"`}},
		{name: "no database", args: []string{"--db", tempDB(t)}, wantErr: "no database at "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, "", append([]string{"activations"}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantAll(t, "output", out, tt.want...)
		})
	}
}

func TestUsageByWorker(t *testing.T) {
	acts := []domain.Activation{
		{WorkerID: "w-b", Status: domain.ActivationSucceeded, InputTokens: 5, OutputTokens: 1},
		{WorkerID: "w-a", Status: domain.ActivationFailed, InputTokens: 7},
		{WorkerID: "w-b", Status: domain.ActivationInterrupted, InputTokens: 2, OutputTokens: 2},
	}
	want := []workerUsage{{Worker: "w-b", Activations: 2, InputTokens: 7, OutputTokens: 3}, {Worker: "w-a", Activations: 1, Failed: 1, InputTokens: 7}}
	if diff := cmp.Diff(want, usageByWorker(acts)); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

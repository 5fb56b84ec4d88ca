package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestCallAudit: recorded calls are listed newest first, filtered by
// worker, tool, time and the workers a viewer may see, with their secrets
// redacted before they are stored; calls past audit.retention are pruned;
// and what is queued when the store closes is written, not lost.
func TestCallAudit(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	clock := storetest.NewClock(t0)
	db := storetest.DB(t)
	keyFile := t.TempDir() + "/key"
	opts := store.Options{Now: clock.Now, KeyFile: keyFile, Transports: domain.NewTransports(domain.TransportSpec{Kind: "pager", Secrets: []string{"pin"}})}
	st, err := store.Open(t.Context(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	record := func(worker, tool, args string, status domain.CallStatus) {
		st.RecordCall(domain.ToolCall{Worker: worker, Tool: tool, Arguments: json.RawMessage(args), Status: status, DurationMs: 1.5})
		clock.Advance(time.Hour)
	}
	record("w-a", "create_stream", `{"transport":{"kind":"pager","config":{"pin":"1234"}}}`, domain.CallOK)
	record("w-b", "publish", `{"stream":"s-x"}`, domain.CallPending)
	record("w-a", "get_role", `{"id":"r-none"}`, domain.CallError)
	// Closing writes what is queued.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = store.Open(ctx, db, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	list := func(f store.CallFilter) []string {
		t.Helper()
		calls, err := st.ListCalls(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, c := range calls {
			out = append(out, c.Worker+" "+c.Tool+" "+string(c.Status)+" "+string(c.Arguments))
		}
		return out
	}
	tests := []struct {
		name string
		f    store.CallFilter
		want []string
	}{
		{"all, newest first, redacted", store.CallFilter{}, []string{"w-a get_role error {\"id\":\"r-none\"}", "w-b publish pending approval {\"stream\":\"s-x\"}",
			`w-a create_stream ok {"transport":{"config":{"pin":"[redacted]"},"kind":"pager"}}`}},
		{"by worker", store.CallFilter{Worker: "w-b"}, []string{"w-b publish pending approval {\"stream\":\"s-x\"}"}},
		{"by tool", store.CallFilter{Tool: "get_role"}, []string{"w-a get_role error {\"id\":\"r-none\"}"}},
		{"since", store.CallFilter{Since: t0.Add(90 * time.Minute)}, []string{"w-a get_role error {\"id\":\"r-none\"}"}},
		{"limit", store.CallFilter{Limit: 1}, []string{"w-a get_role error {\"id\":\"r-none\"}"}},
		{"among", store.CallFilter{Among: []string{"w-b"}}, []string{"w-b publish pending approval {\"stream\":\"s-x\"}"}},
		{"among nobody", store.CallFilter{Among: []string{}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, list(tt.f)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("retention", func(t *testing.T) {
		if err := st.SetSetting(ctx, domain.AuditRetentionSetting, "90m"); err != nil {
			t.Fatal(err)
		}
		n, err := st.PruneCalls(ctx)
		if err != nil || n != 2 {
			t.Fatalf("pruned %d, %v; want the 2 calls older than 90m", n, err)
		}
		// Recorded at the pruning's time, the clock left alone: the writer
		// prunes too, by its own clock reading.
		st.RecordCall(domain.ToolCall{Worker: "w-c", Tool: "list_roles", Arguments: json.RawMessage(`{}`), Status: domain.CallOK, DurationMs: 1.5})
		if err := st.FlushCalls(ctx); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"w-c list_roles ok {}", "w-a get_role error {\"id\":\"r-none\"}"}, list(store.CallFilter{})); diff != "" {
			t.Errorf("calls after pruning (-want +got):\n%s", diff)
		}
	})
}

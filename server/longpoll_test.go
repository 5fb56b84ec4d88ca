package server_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

type readResult struct {
	Events []domain.Event `json:"events"`
	Cursor int64          `json:"cursor"`
}

// TestLongPollWakesOnPublish: a reader parked in read_events(wait=10) is
// woken by another client's publish, not by the end of its wait: within
// 2 s, a margin a loaded CI machine keeps. How soon is
// BenchmarkLongPollWake's figure (a few milliseconds).
func TestLongPollWakesOnPublish(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	reader := h.Owner(t)
	role := servertest.Call[domain.Role](t, reader, "create_role", map[string]any{"title": "Writer", "content": "Write."})
	pos := servertest.Call[domain.Position](t, reader, "create_position", map[string]any{"role": role.ID, "title": "Writer 1"})
	w := servertest.Call[domain.Worker](t, reader, "hire_worker", map[string]any{"position": pos.ID, "kind": "human", "name": "Writer", "grants": []string{"publish"}})
	writer := h.Connect(t, w.ID, servertest.Token(t, h.Store, w.ID))
	st := servertest.Call[domain.Stream](t, reader, "create_stream", map[string]any{"id": "s-poll", "name": "poll"})
	servertest.Call[any](t, reader, "subscribe", map[string]any{"stream": st.ID})

	type answer struct {
		res  *mcp.CallToolResult
		err  error
		done time.Time
	}
	got := make(chan answer, 1)
	go func() {
		res, err := reader.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_events", Arguments: map[string]any{"streams": []string{st.ID}, "wait": 10}})
		got <- answer{res, err, time.Now()}
	}()
	waitUntilParked(t)

	ev := servertest.Call[domain.Event](t, writer, "publish", map[string]any{"stream": st.ID, "body": "wake up"})
	published := time.Now()

	var a answer
	select {
	case a = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("read_events(wait=10) never returned")
	}
	if a.err != nil {
		t.Fatalf("read_events: %v", a.err)
	}
	lag := a.done.Sub(published)
	t.Logf("read_events returned %v after the publish returned", lag)
	if lag >= 2*time.Second {
		t.Errorf("read_events returned %v after the publish, want it woken (< 2s) well before its 10 s wait ends", lag)
	}
	var out readResult
	decode(t, a.res, &out)
	if len(out.Events) != 1 || out.Events[0].ID != ev.ID || out.Events[0].Message.Body != "wake up" || out.Cursor != ev.Seq {
		t.Errorf("read_events = %+v, want only event %s with cursor %d", out, ev.ID, ev.Seq)
	}
}

// waitUntilParked polls the goroutine stacks until a read_events handler is
// blocked in its wait, so the publish that follows can reach it only by
// waking it. Publishing any earlier would let the reader find the event on
// its first read and the test would prove nothing.
func waitUntilParked(t testing.TB) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, "tools.waitForEvents") {
				return
			}
		}
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
		}
	}
	t.Fatal("no read_events call ever blocked waiting for events")
}

func TestLongPollNothingNew(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": "s-empty", "name": "empty"})
	servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": "s-read", "name": "read"})
	servertest.Call[any](t, owner, "invite_workers", map[string]any{"stream": "s-empty", "workers": []string{"w-owner"}})
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-read"})
	last := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-read", "body": "already read"})

	tests := []struct {
		name           string
		stream         string
		since          int64
		wait           float64
		atLeast, under time.Duration
	}{
		{"wait 0 on an empty stream", "s-empty", 0, 0, 0, time.Second},
		{"wait 0 past the last event", "s-read", last.Seq, 0, 0, time.Second},
		{"wait runs out on an empty stream", "s-empty", 0, 0.2, 200 * time.Millisecond, 5 * time.Second},
		{"wait runs out past the last event", "s-read", last.Seq, 0.2, 200 * time.Millisecond, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := owner.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_events",
				Arguments: map[string]any{"streams": []string{tt.stream}, "since": tt.since, "wait": tt.wait}})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			var out readResult
			decode(t, res, &out)
			if out.Events == nil || len(out.Events) != 0 {
				t.Errorf("events = %#v, want an empty list", out.Events)
			}
			if out.Cursor != tt.since {
				t.Errorf("cursor = %d, want %d unchanged", out.Cursor, tt.since)
			}
			if took < tt.atLeast || took >= tt.under {
				t.Errorf("read_events(wait=%v) took %v, want [%v, %v)", tt.wait, took, tt.atLeast, tt.under)
			}
		})
	}
}

// decode unmarshals a successful tool result's structured output.
func decode(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", servertest.Text(res))
	}
	if err := decodeInto(res, out); err != nil {
		t.Fatal(err)
	}
}

// decodeInto is decode for goroutines, which must not call t.Fatal.
func decodeInto(res *mcp.CallToolResult, out any) error {
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s: %w", raw, err)
	}
	return nil
}

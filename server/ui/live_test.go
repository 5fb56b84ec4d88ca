// The live views' tests run one at a time, before the package's parallel
// tests start: they hold servers with read and write timeouts of a few
// hundred milliseconds and pings every hundred, which other tests' load
// would upset (CONTRIBUTING.md).

package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/inbound"
)

// sseEvent is one Server-Sent Event as a browser would parse it.
type sseEvent struct {
	ID, Name, Data string
	Comment        bool
}

// sseStream reads events from a live view in the background.
type sseStream struct {
	events chan sseEvent
	resp   *http.Response
}

func openLive(t *testing.T, c *http.Client, url, lastEventID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		t.Fatalf("live view: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body[:n])
	}
	s := &sseStream{events: make(chan sseEvent, 1024), resp: resp}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				s.events <- sseEvent{Comment: true, Data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
	}()
	return s
}

// next returns the next event that is not a comment (or the next comment
// when comments is set), failing after d.
func (s *sseStream) next(t *testing.T, d time.Duration, comments bool) sseEvent {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("live view closed")
			}
			if ev.Comment == comments {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event within %s", d)
		}
	}
}

// openPageLive opens the live view of the page at path, which must be
// view.
func openPageLive(t *testing.T, o *org, c *client, path, view string) *sseStream {
	t.Helper()
	code, page := c.get(t, path)
	live := html.UnescapeString(between(page, `data-live="`, `"`))
	if code != 200 || !strings.Contains(live, "view="+view) {
		t.Fatalf("%s = %d, live view %q, want view=%s", path, code, live, view)
	}
	return openLive(t, c.Client, o.base+live, "")
}

// refreshAt waits for the refresh that follows seq; what names the
// change that should bring it, and every event before it must be a
// refresh too.
func (s *sseStream) refreshAt(t *testing.T, what string, seq int64) {
	t.Helper()
	for {
		ev := s.next(t, 10*time.Second, false)
		if ev.Name != "refresh" {
			t.Fatalf("%s: event %+v, want refresh", what, ev)
		}
		if n, _ := strconv.ParseInt(ev.ID, 10, 64); n >= seq {
			return
		}
	}
}

func publishN(t *testing.T, o *org, stream string, from, n int) []int64 {
	t.Helper()
	var seqs []int64
	for i := from; i < from+n; i++ {
		ev := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": stream, "body": fmt.Sprintf("message %d", i)})
		seqs = append(seqs, ev.Seq)
	}
	return seqs
}

// TestLiveReplay: a live view sends each event with its seq as the SSE
// id; reconnecting with Last-Event-ID replays exactly what came after it,
// in order, then carries on live — nothing missed, nothing twice.
func TestLiveReplay(t *testing.T) {
	o := newOrg(t)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a"}) // reading needs a subscription
	o.call(t, "create_stream", map[string]any{"id": "s-b", "name": "b"})
	c := o.client(t, "w-owner")
	seqs := publishN(t, o, "s-a", 0, 10)
	publishN(t, o, "s-b", 100, 3) // another stream: never shown on s-a's view

	s := openLive(t, c.Client, o.base+"/ui/live?view=stream&stream=s-a&since=0", strconv.FormatInt(seqs[3], 10))
	var got []string
	for range 6 {
		ev := s.next(t, 5*time.Second, false)
		var msg struct {
			Seq  int64
			HTML string
		}
		json.Unmarshal([]byte(ev.Data), &msg)
		if ev.Name != "ev" || ev.ID != strconv.FormatInt(msg.Seq, 10) {
			t.Fatalf("event %+v: want name ev and id = seq", ev)
		}
		got = append(got, between(msg.HTML, `<div class="md"><p>`, "</p>"))
	}
	later := publishN(t, o, "s-a", 10, 2)
	for _, seq := range later {
		ev := s.next(t, 5*time.Second, false)
		if ev.ID != strconv.FormatInt(seq, 10) {
			t.Fatalf("live event id %s, want %d", ev.ID, seq)
		}
	}
	want := []string{"message 4", "message 5", "message 6", "message 7", "message 8", "message 9"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed after Last-Event-ID %d (-want +got):\n%s", seqs[3], diff)
	}
}

// TestLiveKeepsGoing: behind an http.Server with short read and write
// timeouts, a live view stays open, pings, and still delivers; and a view
// whose grant is revoked is told so and ends.
func TestLiveKeepsGoing(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	mcpSrv := servertest.StartWith(t, st, server.Config{})
	o := &org{h: mcpSrv, owner: mcpSrv.Owner(t)}
	withMaya(t, o)
	o.call(t, "create_stream", map[string]any{"id": "s-a", "name": "a"})
	o.call(t, "subscribe", map[string]any{"stream": "s-a", "worker": "w-maya"}) // reading needs a subscription
	hs := httptest.NewUnstartedServer(ui.New(st, ui.Config{PingInterval: 100 * time.Millisecond, Status: inbound.Status}))
	hs.Config.ReadTimeout, hs.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	hs.Start()
	t.Cleanup(hs.Close)
	o.base = hs.URL

	c := o.client(t, "w-maya")
	s := openLive(t, c.Client, hs.URL+"/ui/live?view=stream&stream=s-a&since=0", "")
	deadline := time.Now().Add(time.Second) // past both timeouts, three times over
	for pings := 0; time.Now().Before(deadline); pings++ {
		if ev := s.next(t, 2*time.Second, true); ev.Data != "ping" {
			t.Fatalf("comment %q, want ping", ev.Data)
		}
	}
	seq := publishN(t, o, "s-a", 0, 1)[0]
	if ev := s.next(t, 2*time.Second, false); ev.ID != strconv.FormatInt(seq, 10) {
		t.Fatalf("after a second open: event %+v, want seq %d", ev, seq)
	}

	o.call(t, "revoke_tool", map[string]any{"worker": "w-maya", "tool": "read_events"})
	ev := s.next(t, 2*time.Second, false)
	if ev.Name != "ended" || !strings.Contains(ev.Data, `missing grant: worker w-maya does not hold grant \"read_events\"`) {
		t.Fatalf("after revoking read_events: %+v, want an ended event naming the grant", ev)
	}
}

// TestLiveRefused: a live view the viewer may not read is refused up
// front with the tool's reason.
func TestLiveRefused(t *testing.T) {
	o := newOrg(t)
	withMaya(t, o)
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-staff", "kind": "ai", "name": "Bot"})
	o.call(t, "dm", map[string]any{"to": "w-bot", "body": "private"})
	c := o.client(t, "w-maya")
	for _, tc := range []struct{ url, want string }{
		{"/ui/live?view=stream&stream=" + store.DMStreamID("w-owner", "w-bot"), "direct-message stream; only its two members"},
		{"/ui/live?view=log&worker=w-bot", `does not hold grant \"worker_log\"`},
		{"/ui/live?view=fleet", "nothing here you may watch"},
		{"/ui/live?view=bogus", `unknown live view \"bogus\"`},
	} {
		resp, err := c.Get(o.base + tc.url)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1024)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		body := strings.ReplaceAll(string(b[:n]), `"`, `\"`)
		if resp.StatusCode < 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want a refusal containing %q", tc.url, resp.StatusCode, b[:n], tc.want)
		}
	}
}

// TestLiveFollowsLaterWorkers: the org chart's live view follows workers
// hired after it opened. One hired while the chart is open runs, and its
// card must not keep the "running" badge once the run ends: the view sends
// a refresh for the run's start and one for its end, and the page then
// shows each.
func TestLiveFollowsLaterWorkers(t *testing.T) {
	o := newOrg(t)
	ctx, st := t.Context(), o.h.Store
	c := o.client(t, "w-owner")
	s := openPageLive(t, o, c, "/ui/", "org")
	card := func() string {
		t.Helper()
		_, body := c.get(t, "/ui/")
		_, line, ok := strings.Cut(body, `href="/ui/workers/w-late"`)
		if !ok {
			t.Fatalf("the org chart does not show w-late:\n%s", body)
		}
		line, _, _ = strings.Cut(line, "</li>")
		return line
	}

	o.call(t, "create_role", map[string]any{"id": "r-late", "title": "Late", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-late", "role": "r-late", "title": "Late"})
	hired := servertest.Call[domain.Worker](t, o.owner, "hire_worker", map[string]any{"id": "w-late", "position": "p-late", "kind": "ai", "name": "Late"})
	last, err := st.LastSeq(ctx)
	if err != nil || hired.ID != "w-late" {
		t.Fatalf("hire: %+v, %v", hired, err)
	}
	s.refreshAt(t, "the hire", last)

	if _, _, _, err := st.Claim(ctx, "w-late", "act-late", time.Hour); err != nil {
		t.Fatal(err)
	}
	start, err := st.Append(ctx, logEntry("w-late", "act-late", domain.LogStart, "", "activation act-late started"), store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.refreshAt(t, "the run's start", start.Seq)
	if got := card(); !strings.Contains(got, "status-running") {
		t.Fatalf("while w-late runs, its card: %s", got)
	}
	if err := st.FinishActivation(ctx, domain.Activation{ID: "act-late", Status: domain.ActivationSucceeded}, logEntry("w-late", "act-late", domain.LogExit, "", "done")); err != nil {
		t.Fatal(err)
	}
	end, err := st.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.refreshAt(t, "the run's end", end)
	if got := card(); strings.Contains(got, "status-running") || !strings.Contains(got, "status-idle") {
		t.Fatalf("after w-late's run ended, its card: %s", got)
	}
}

// TestLiveFollowsLaterTasks: a spec task begun while the Tasks page is
// open wakes the page when something happens on its own stream (an item
// moving), as a task listed when the page opened does.
func TestLiveFollowsLaterTasks(t *testing.T) {
	o := newOrg(t)
	taskTeam(t, o)
	ctx, st := t.Context(), o.h.Store
	c := o.client(t, "w-owner")
	_, page := c.get(t, "/ui/tasks")
	live := html.UnescapeString(between(page, `data-live="`, `"`))
	if !strings.Contains(live, "view=tasks") {
		t.Fatalf("tasks page live view %q", live)
	}
	s := openLive(t, c.Client, o.base+live, "")
	o.call(t, "create_spec_task", map[string]any{"title": "Login", "prompt": "Add a login.", "planner": "w-plan", "builders": []string{"w-b1"}})
	ev, err := st.Append(ctx, domain.Event{StreamID: domain.TaskStream("t-login"), Source: "w-b1",
		Message: domain.Message{From: "w-b1", Body: "item 1 moved", BodyContentType: "text/plain"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		got := s.next(t, 10*time.Second, false)
		if n, _ := strconv.ParseInt(got.ID, 10, 64); got.Name == "refresh" && n >= ev.Seq {
			break
		}
	}
}

// TestLiveMoneyFollowsARun: the Money page's live view wakes as a run
// goes, not only when it ends: each model call is spend, and a run logs
// what each call answered (a message, a tool call).
func TestLiveMoneyFollowsARun(t *testing.T) {
	o := newOrg(t)
	ctx, st := t.Context(), o.h.Store
	c := o.client(t, "w-owner")
	o.call(t, "create_role", map[string]any{"id": "r-spend", "title": "Spender", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-spend", "role": "r-spend", "title": "Spender"})
	servertest.Call[domain.Worker](t, o.owner, "hire_worker", map[string]any{"id": "w-spend", "position": "p-spend", "kind": "ai", "name": "Spender"})
	if _, _, _, err := st.Claim(ctx, "w-spend", "act-spend", time.Hour); err != nil {
		t.Fatal(err)
	}
	s := openPageLive(t, o, c, "/ui/money", "money")
	for _, step := range []struct {
		kind      domain.LogKind
		tool, say string
	}{
		{domain.LogToolCall, "publish", `{"stream":"s-x"}`},
		{domain.LogAssistant, "", "Published."},
	} {
		ev, err := st.Append(ctx, logEntry("w-spend", "act-spend", step.kind, step.tool, step.say), store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.refreshAt(t, "after a "+string(step.kind), ev.Seq)
	}
}

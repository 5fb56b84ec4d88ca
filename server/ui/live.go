package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// liveView is what one live page watches and how it shows each event.
type liveView struct {
	streams []string
	match   func(domain.Event) bool
	// check says whether the viewer may still watch; it runs at connect
	// and again on every ping, so a revoked grant stops the view.
	check func(ctx context.Context) error
	// admit, when set, is asked of each matching event before it is
	// sent, in the view's own goroutine rather than under the hub's lock:
	// a view that follows streams made after it opened checks there that
	// the viewer may read each one.
	admit func(ctx context.Context, ev domain.Event) bool
	// render is the HTML of one event; nil for views that only say
	// "refresh", whose page reloads its content instead.
	render func(ev domain.Event) ([]byte, error)
}

// liveURL is the address of a page's live view, with the cursor taken
// now: call it before reading what the page shows, so an event that lands
// in between is replayed rather than missed.
func (u *UI) liveURL(ctx context.Context, kv ...string) string {
	seq, err := u.st.LastSeq(ctx)
	if err != nil {
		return ""
	}
	return u.cfg.Root + "/ui/live" + queryString(append(kv, "since", strconv.FormatInt(seq, 10))...)
}

// handleLive serves a live view as Server-Sent Events. Each event's SSE
// id is its seq, so a browser that reconnects with Last-Event-ID gets
// exactly what it missed, in order; a comment every PingInterval keeps
// proxies from closing an idle connection.
func (u *UI) handleLive(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	view, err := u.liveView(ctx, v, r)
	if err == nil {
		err = view.check(ctx)
	}
	if err != nil {
		http.Error(w, "live view refused: "+err.Error(), u.cfg.Status(err))
		return
	}
	closeView, err := u.live.open(v.sessionID, u.st.IntSetting(ctx, LiveViewsPerSessionSetting), u.st.IntSetting(ctx, LiveViewsMaxSetting))
	if err != nil {
		if err.(*errTooManyLive).retry {
			w.Header().Set("Retry-After", "30")
		}
		http.Error(w, "live view refused: "+err.Error(), http.StatusTooManyRequests)
		return
	}
	defer closeView()
	wt, upTo, err := u.hub.subscribe(ctx, view.match)
	if errors.Is(err, errStopped) {
		http.Error(w, "live view refused: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		u.log.Error("live view", "err", err)
		http.Error(w, "live view failed; the server's log says why", http.StatusInternalServerError)
		return
	}
	defer u.hub.unsubscribe(wt)
	out := newSSE(w, u.cfg.PingInterval)
	// A cursor from the future (a page of a database since replaced) would
	// hide every event until the log caught up with it: start from now.
	last, err := u.replay(ctx, out, view, min(cursor(r), upTo), upTo)
	if err != nil {
		return
	}
	ping := time.NewTicker(u.cfg.PingInterval)
	defer ping.Stop()
	checked := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case evs, ok := <-wt.ch:
			if !ok {
				return // fell behind: the page reconnects and replays
			}
			if time.Since(checked) > 5*time.Second {
				if !u.stillAllowed(ctx, out, v, view) {
					return
				}
				checked = time.Now()
			}
			if last, err = u.send(ctx, out, view, evs, last); err != nil {
				return
			}
		case <-ping.C:
			if !u.stillAllowed(ctx, out, v, view) || out.comment("ping") != nil {
				return
			}
			checked = time.Now()
		}
	}
}

// cursor is where a live view starts: the browser's Last-Event-ID on a
// reconnect, else the since the page was rendered with.
func cursor(r *http.Request) int64 {
	s := r.Header.Get("Last-Event-ID")
	if s == "" {
		s = r.URL.Query().Get("since")
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// replay sends the matching events after since up to upTo, which the hub
// has already read past; later ones come from the hub.
func (u *UI) replay(ctx context.Context, out *sse, view *liveView, since, upTo int64) (int64, error) {
	last := since
	for last < upTo {
		evs, err := u.st.ReadEvents(ctx, store.EventQuery{StreamIDs: view.streams, Since: last, Limit: store.MaxReadLimit})
		if err != nil {
			u.log.Error("live view: replay", "err", err)
			return last, err
		}
		var batch []domain.Event
		for _, ev := range evs {
			if ev.Seq <= upTo && view.match(ev) {
				batch = append(batch, ev)
			}
		}
		if last, err = u.send(ctx, out, view, batch, last); err != nil {
			return last, err
		}
		if len(evs) < store.MaxReadLimit || evs[len(evs)-1].Seq >= upTo {
			break
		}
		last = max(last, evs[len(evs)-1].Seq)
	}
	return last, nil
}

// send writes the events after last: each as its own SSE event, or one
// "refresh" for views that reload instead.
func (u *UI) send(ctx context.Context, out *sse, view *liveView, evs []domain.Event, last int64) (int64, error) {
	var fresh []domain.Event
	for _, ev := range evs {
		if ev.Seq > last && (view.admit == nil || view.admit(ctx, ev)) {
			fresh = append(fresh, ev)
		}
	}
	if len(fresh) == 0 {
		return last, nil
	}
	if view.render == nil {
		seq := fresh[len(fresh)-1].Seq
		return seq, out.event(seq, "refresh", []byte(`{}`))
	}
	for _, ev := range fresh {
		html, err := view.render(ev)
		if err != nil {
			u.log.Error("live view: render", "seq", ev.Seq, "err", err)
			return last, err
		}
		data, _ := json.Marshal(map[string]any{"seq": ev.Seq, "html": string(html), "thread": ev.Message.ThreadID})
		if err := out.event(ev.Seq, "ev", data); err != nil {
			return last, err
		}
		last = ev.Seq
	}
	return last, nil
}

// stillAllowed re-checks the session and the view's grant; when either is
// gone it tells the page why and the view ends.
func (u *UI) stillAllowed(ctx context.Context, out *sse, v *viewer, view *liveView) bool {
	err := func() error {
		fresh, err := u.loadViewer(ctx, v.sessionID)
		if err != nil {
			return err
		}
		*v = *fresh // the view's checks hold v, so they see the new grants
		return view.check(ctx)
	}()
	if err == nil {
		return true
	}
	msg, _ := json.Marshal(map[string]string{"error": err.Error()})
	out.event(0, "ended", msg)
	return false
}

// sse writes Server-Sent Events, pushing the write deadline forward before
// each write so server-wide write timeouts never cut a live view, while a
// client that stops reading still times out.
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	window time.Duration
}

func newSSE(w http.ResponseWriter, ping time.Duration) *sse {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // the request is read; the stream is long
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: rc, window: ping + 30*time.Second}
	s.write([]byte("retry: 2000\n\n"))
	return s
}

func (s *sse) event(id int64, name string, data []byte) error {
	var b bytes.Buffer
	if id > 0 {
		fmt.Fprintf(&b, "id: %d\n", id)
	}
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	return s.write(b.Bytes())
}

func (s *sse) comment(text string) error { return s.write([]byte(": " + text + "\n\n")) }

func (s *sse) write(b []byte) error {
	s.rc.SetWriteDeadline(time.Now().Add(s.window))
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

package ui

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// hub reads each new stretch of the event log once and hands it to every
// live view that wants some of it, so a thousand open pages cost one query
// per commit, not a thousand. It runs only while someone is watching.
type hub struct {
	st  *store.Store
	log *slog.Logger

	mu   sync.Mutex
	subs map[*watch]struct{}
	// run is the current reader; nil when no one watches.
	run *hubRun
	// closed is set once the org has stopped (close).
	closed bool
}

type hubRun struct {
	stop chan struct{}
	last int64
}

// watch is one live view's subscription.
type watch struct {
	match func(domain.Event) bool
	// ch carries batches of matching events in order. It is closed when
	// the watcher fell too far behind: its page reconnects and replays
	// from its Last-Event-ID, so nothing is lost.
	ch chan []domain.Event
}

// watchBuffer is how many batches a slow page may have waiting.
const watchBuffer = 64

func newHub(st *store.Store, log *slog.Logger) *hub {
	return &hub{st: st, log: log, subs: map[*watch]struct{}{}}
}

// subscribe registers a watch and returns the seq up to which the hub has
// read: events after it arrive on the watch, events up to it the caller
// reads itself, so together they miss nothing.
func (h *hub) subscribe(ctx context.Context, match func(domain.Event) bool) (*watch, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, 0, errStopped
	}
	if h.run == nil {
		last, err := h.st.LastSeq(ctx)
		if err != nil {
			return nil, 0, err
		}
		h.run = &hubRun{stop: make(chan struct{}), last: last}
		go h.loop(h.run)
	}
	w := &watch{match: match, ch: make(chan []domain.Event, watchBuffer)}
	h.subs[w] = struct{}{}
	return w, h.run.last, nil
}

func (h *hub) unsubscribe(w *watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, w)
	if len(h.subs) == 0 && h.run != nil {
		close(h.run.stop)
		h.run = nil
	}
}

// errStopped is subscribe's error once the org has stopped.
var errStopped = errors.New("this org has stopped")

// close ends every live view and refuses new ones: the org has stopped
// (archived, or the server is shutting down). Their pages reconnect and
// find what the server answers now.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for w := range h.subs {
		delete(h.subs, w)
		close(w.ch)
	}
	if h.run != nil {
		close(h.run.stop)
		h.run = nil
	}
}

// loop reads what each commit added and fans it out, until the last
// watcher leaves.
func (h *hub) loop(run *hubRun) {
	ctx := context.Background()
	for {
		changed := h.st.Changed()
		evs, err := h.st.EventsAfter(ctx, run.last, store.MaxReadLimit)
		if err != nil {
			h.log.Error("live views: read events", "err", err)
		}
		if !h.fanOut(run, evs) {
			return
		}
		if len(evs) == store.MaxReadLimit {
			continue
		}
		select {
		case <-changed:
		case <-run.stop:
			return
		case <-time.After(time.Minute): // belt and braces; commits wake us
		}
	}
}

// fanOut gives each watcher its share of a batch. It reports false once
// this run has been stopped.
func (h *hub) fanOut(run *hubRun, evs []domain.Event) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.run != run {
		return false
	}
	if len(evs) == 0 {
		return true
	}
	run.last = evs[len(evs)-1].Seq
	for w := range h.subs {
		var mine []domain.Event
		for _, ev := range evs {
			if w.match(ev) {
				mine = append(mine, ev)
			}
		}
		if len(mine) == 0 {
			continue
		}
		select {
		case w.ch <- mine:
		default:
			delete(h.subs, w)
			close(w.ch)
		}
	}
	return true
}

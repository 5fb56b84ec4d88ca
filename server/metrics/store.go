package metrics

import (
	"bufio"
	"context"
	"sync"
	"time"

	"github.com/helixml/helix-org/domain"
)

// storeCollector reads, at each scrape, the pending triggers (one count
// on an index) and the events appended since the last scrape by their
// stream's kind, adding those to its running totals.
type storeCollector struct {
	st Store

	mu     sync.Mutex
	cursor int64
	totals map[domain.TransportKind]int64
}

func newStoreCollector(st Store, cursor int64) *storeCollector {
	return &storeCollector{st: st, cursor: cursor, totals: map[domain.TransportKind]int64{}}
}

func (c *storeCollector) write(w *bufio.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failed := 0.0
	if n, err := c.st.PendingTriggers(ctx); err == nil {
		writeFamily(w, "helix_org_triggers_pending", "Triggers waiting for or in a run.", "gauge", []sample{{value: float64(n)}})
	} else {
		failed = 1
	}
	c.mu.Lock()
	if err := c.advance(ctx); err != nil {
		failed = 1
	}
	events := make([]sample, 0, len(c.totals))
	for kind, n := range c.totals {
		events = append(events, sample{labels: []string{"kind", string(kind)}, value: float64(n)})
	}
	c.mu.Unlock()
	sortSamples(events)
	writeFamily(w, "helix_org_events_appended_total", "Events appended since the server started, by stream kind.", "counter", events)
	writeFamily(w, "helix_org_metrics_store_errors", "1 when this scrape could not read the store.", "gauge", []sample{{value: failed}})
}

// advance adds the events since the cursor to the totals.
func (c *storeCollector) advance(ctx context.Context) error {
	counts, upTo, err := c.st.EventsByKind(ctx, c.cursor)
	if err != nil {
		return err
	}
	for kind, n := range counts {
		c.totals[kind] += n
	}
	c.cursor = upTo
	return nil
}

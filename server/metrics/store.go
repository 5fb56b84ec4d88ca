package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/helixml/helix-org/domain"
)

// storeCollector reads, at each scrape, the pending triggers (one count
// on an index) and the events appended since the last scrape by their
// stream's kind, adding those to its running totals.
type storeCollector struct {
	st      Store
	pending *prometheus.Desc
	events  *prometheus.Desc
	errors  *prometheus.Desc

	mu     sync.Mutex
	cursor int64
	totals map[domain.TransportKind]int64
}

func newStoreCollector(st Store, cursor int64) *storeCollector {
	return &storeCollector{st: st, cursor: cursor, totals: map[domain.TransportKind]int64{},
		pending: prometheus.NewDesc("helix_org_triggers_pending", "Triggers waiting for or in a run.", nil, nil),
		events:  prometheus.NewDesc("helix_org_events_appended_total", "Events appended since the server started, by stream kind.", []string{"kind"}, nil),
		errors:  prometheus.NewDesc("helix_org_metrics_store_errors", "1 when this scrape could not read the store.", nil, nil)}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.events
	ch <- c.errors
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failed := 0.0
	if n, err := c.st.PendingTriggers(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n))
	} else {
		failed = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.advance(ctx); err != nil {
		failed = 1
	}
	for kind, n := range c.totals {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(n), string(kind))
	}
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.GaugeValue, failed)
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

package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/helixml/helix-org/domain"
)

// memoryCollector reads the insight memory's health at each scrape
// (Store.MemoryHealth: a few aggregate queries).
type memoryCollector struct {
	st                                Store
	byType, byScope, byState, flagged *prometheus.Desc
	runsShown, runsCiting, outcomes   *prometheus.Desc
	votes, voters, errors             *prometheus.Desc
}

func newMemoryCollector(st Store) *memoryCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("helix_org_"+name, help, labels, nil)
	}
	return &memoryCollector{st: st,
		byType:     d("insights_by_type", "Current insights by type.", "type"),
		byScope:    d("insights_by_scope", "Current insights by scope.", "scope"),
		byState:    d("insight_versions", "Insight versions by state (current, superseded, retired).", "state"),
		flagged:    d("insights_flagged", "Current insights that need a look: stale, contested, quarantined, sunk.", "flag"),
		runsShown:  d("insight_runs_shown", "Runs that were shown insights."),
		runsCiting: d("insight_runs_citing", "Runs that cited an insight they used."),
		outcomes:   d("insight_run_outcomes", "Runs with an outcome that credits what they cited, by the outcome's source and value.", "source", "outcome"),
		votes:      d("insight_votes", "People's votes on insights outside runs."),
		voters:     d("insight_voters", "People who have voted on an insight."),
		errors:     d("metrics_memory_errors", "1 when this scrape could not read the memory's health.")}
}

func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.byType, c.byScope, c.byState, c.flagged, c.runsShown, c.runsCiting, c.outcomes, c.votes, c.voters, c.errors} {
		ch <- d
	}
}

func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := c.st.MemoryHealth(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.GaugeValue, 1)
		return
	}
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for _, t := range domain.InsightTypes {
		gauge(c.byType, h.ByType[t], string(t))
	}
	for _, s := range domain.InsightScopes {
		gauge(c.byScope, h.ByScope[s], string(s))
	}
	for _, s := range []string{"current", "superseded", "retired"} {
		gauge(c.byState, h.ByState[s], s)
	}
	for flag, n := range map[string]int{"stale": h.Stale, "contested": h.Contested, "quarantined": h.Quarantined, "sunk": h.Sunk} {
		gauge(c.flagged, n, flag)
	}
	f := h.Feedback
	gauge(c.runsShown, f.RunsShown)
	gauge(c.runsCiting, f.RunsCiting)
	for _, o := range f.Outcomes {
		gauge(c.outcomes, o.Runs, string(o.Source), string(o.Outcome))
	}
	gauge(c.votes, f.Votes)
	gauge(c.voters, f.Voters)
	gauge(c.errors, 0)
}

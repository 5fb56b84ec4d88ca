package metrics

import (
	"bufio"
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
)

// memoryCollector reads the insight memory's health at each scrape
// (Store.MemoryHealth: a few aggregate queries).
type memoryCollector struct{ st Store }

func newMemoryCollector(st Store) memoryCollector { return memoryCollector{st: st} }

func (c memoryCollector) write(w *bufio.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const errorsName, errorsHelp = "helix_org_metrics_memory_errors", "1 when this scrape could not read the memory's health."
	h, err := c.st.MemoryHealth(ctx)
	if err != nil {
		writeFamily(w, errorsName, errorsHelp, "gauge", []sample{{value: 1}})
		return
	}
	gauges := func(name, help string, s ...sample) {
		sortSamples(s)
		writeFamily(w, "helix_org_"+name, help, "gauge", s)
	}
	one := func(v int, labels ...string) sample { return sample{labels: labels, value: float64(v)} }
	var s []sample
	for _, t := range domain.InsightTypes {
		s = append(s, one(h.ByType[t], "type", string(t)))
	}
	gauges("insights_by_type", "Current insights by type.", s...)
	s = nil
	for _, sc := range domain.InsightScopes {
		s = append(s, one(h.ByScope[sc], "scope", string(sc)))
	}
	gauges("insights_by_scope", "Current insights by scope.", s...)
	s = nil
	for _, st := range []string{"current", "superseded", "retired"} {
		s = append(s, one(h.ByState[st], "state", st))
	}
	gauges("insight_versions", "Insight versions by state (current, superseded, retired).", s...)
	gauges("insights_flagged", "Current insights that need a look: stale, contested, quarantined, sunk.",
		one(h.Stale, "flag", "stale"), one(h.Contested, "flag", "contested"), one(h.Quarantined, "flag", "quarantined"), one(h.Sunk, "flag", "sunk"))
	f := h.Feedback
	gauges("insight_runs_shown", "Runs that were shown insights.", one(f.RunsShown))
	gauges("insight_runs_citing", "Runs that cited an insight they used.", one(f.RunsCiting))
	s = nil
	for _, o := range f.Outcomes {
		s = append(s, one(o.Runs, "outcome", string(o.Outcome), "source", string(o.Source)))
	}
	gauges("insight_run_outcomes", "Runs with an outcome that credits what they cited, by the outcome's source and value.", s...)
	gauges("insight_votes", "People's votes on insights outside runs.", one(f.Votes))
	gauges("insight_voters", "People who have voted on an insight.", one(f.Voters))
	writeFamily(w, errorsName, errorsHelp, "gauge", []sample{{value: 0}})
}

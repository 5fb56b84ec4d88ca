package ui_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
)

// orgChartSize is how the org page draws its chart: the width the graph
// asks for and the width it is drawn at, the owner's card's height as
// laid out and as drawn, and the chart's scrolling box.
const orgChartSize = `(() => {
  const svg = document.querySelector("svg.org-graph"), card = svg.querySelector("#graph-p-owner rect.g-box");
  return {width: +svg.getAttribute("width"), drawnWidth: svg.getBoundingClientRect().width,
    cardHeight: +card.getAttribute("height"), drawnCardHeight: card.getBoundingClientRect().height,
    boxWidth: svg.parentElement.clientWidth, scrollWidth: svg.parentElement.scrollWidth};
})()`

// TestChartsKeepTheirSize: the org chart is drawn at its own size — a
// one-card chart is not blown up to fill its column, and one wider than
// the column scrolls inside it instead of shrinking — while each of the
// Money page's charts still fills its box.
func TestChartsKeepTheirSize(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	tab := o.tab(t, "w-owner")
	emulate(t, tab, 1280, 800, false)
	orgChart := func(what string) map[string]float64 {
		t.Helper()
		uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("svg.org-graph")))
		got := uitest.Run(t, tab, chromedp.Evaluate[map[string]float64](orgChartSize))
		if math.Abs(got["drawnWidth"]-got["width"]) > 0.5 || math.Abs(got["drawnCardHeight"]-got["cardHeight"]) > 0.5 {
			t.Errorf("%s: the chart is drawn %.0f px wide for its %.0f, the owner's card %.0f px tall for its %.0f",
				what, got["drawnWidth"], got["width"], got["drawnCardHeight"], got["cardHeight"])
		}
		return got
	}

	orgChart("the owner alone")

	o.call(t, "create_role", map[string]any{"id": "r-staff", "title": "Staff", "content": "Work."})
	for i := range 6 {
		o.call(t, "create_position", map[string]any{"id": fmt.Sprintf("p-staff%d", i), "role": "r-staff", "title": fmt.Sprintf("Staff %d", i)})
	}
	o.call(t, "hire_worker", map[string]any{"id": "w-b1", "position": "p-staff0", "kind": "ai", "name": "Builder"})
	if got := orgChart("six reports"); got["scrollWidth"] <= got["boxWidth"] {
		t.Errorf("six reports: the chart's box is %.0f px wide and scrolls to %.0f, want it to scroll to the chart's %.0f",
			got["boxWidth"], got["scrollWidth"], got["width"])
	}

	spendRun(t, o.h.Store, "w-b1", "act-b1", store.Usage{Model: "m", Input: 700, Output: 150})
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/money"), chromedp.WaitVisible(chromedp.CSS(`.charts svg[role="img"]`)))
	charts := uitest.Run(t, tab, chromedp.Evaluate[[]map[string]any](`[...document.querySelectorAll('.charts figure')].map(f => ({
	  title: f.querySelector("figcaption").textContent, box: f.clientWidth, drawn: f.querySelector('svg[role="img"]').getBoundingClientRect().width}))`))
	if len(charts) == 0 {
		t.Fatal("the Money page shows no chart")
	}
	for _, c := range charts {
		if box, drawn := c["box"].(float64), c["drawn"].(float64); box < 280 || math.Abs(drawn-box) > 0.5 {
			t.Errorf("Money's %q chart is drawn %.0f px wide in its %.0f px box, want it to fill the box", c["title"], drawn, box)
		}
	}
}

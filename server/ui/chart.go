package ui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/helixml/helix-org/store"
)

// Pictures are drawn on the server as SVG: no script and no chart
// library, so they show without JavaScript and leave nothing to load.

// meter is a bar filled to part of a whole (the "meter" template), with
// an optional mark at a threshold; all in percent of the whole.
type meter struct {
	Fill, Soft float64
	// Class styles the fill: a budget's state, or "progress".
	Class string
	Label string
}

// newMeter fills a meter to part/whole, capped at 100 %, and marks soft
// (0 for no mark).
func newMeter(part, whole, soft float64, class, label string) meter {
	pct := func(x float64) float64 {
		if whole <= 0 {
			return 0
		}
		return math.Min(100, math.Max(0, 100*x/whole))
	}
	return meter{Fill: pct(part), Soft: pct(soft), Class: class, Label: label}
}

// The stacked bar chart's box, in SVG user units: the SVG scales to its
// card, so these fix only the proportions and the text's relative size.
const (
	chartW, chartH           = 360.0, 190.0
	chartLeft, chartRight    = 52.0, 6.0
	chartTop, chartBottom    = 8.0, 22.0
	chartGroups              = 5 // the largest groups named; the rest are "other"
	chartXLabels             = 8 // at most this many bucket labels under the bars
	chartOther, chartPalette = "other", "#8a94a6"
)

// chartColors are the groups' fills, largest first, told apart also by
// the legend's order.
var chartColors = []string{"#2f5bd3", "#1f8a4c", "#c77700", "#8e44ad", "#c0392b", "#16a085"}

// barChart is spend over time as stacked bars: a bar per bucket, stacked
// by group, with grid lines, bucket labels and a legend with each
// group's total.
type barChart struct {
	Title string
	Label string
	W, H  float64
	// Left and Right bound the plot: grid lines run between them, their
	// labels end left of Left.
	Left, Right float64
	Bars        []chartBar
	Grid        []chartLine
	Ticks       []chartTick
	Legend      []chartKey
	Empty       bool
	// Note says how to read the chart, where its bars are not a plain split.
	Note string
}

type chartBar struct {
	X, Y, W, H float64
	Fill       string
	Title      string
}

type chartLine struct {
	Y     float64
	Label string
}

type chartTick struct {
	X     float64
	Label string
}

type chartKey struct {
	Key, Fill, Total string
}

// measure is what a chart counts of spend: money or tokens.
type measure struct {
	Name   string
	Of     func(store.SeriesPoint) float64
	Format func(float64) string
}

// stackedBars draws points over buckets labelled labels by m.
func stackedBars(title string, labels []string, points []store.SeriesPoint, m measure) barChart {
	c := barChart{Title: title, W: chartW, H: chartH, Left: chartLeft, Right: chartW - chartRight}
	points = slices.DeleteFunc(slices.Clone(points), func(p store.SeriesPoint) bool { return p.Bucket < 0 || p.Bucket >= len(labels) })
	totals := map[string]float64{}
	for _, p := range points {
		totals[p.Key] += m.Of(p)
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k, v := range totals {
			if v > 0 && !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b)) })
	if len(keys) == 0 {
		c.Empty = true
		c.Label = title + ": nothing spent"
		return c
	}
	group, fill := groups(keys)
	stacks := make([]map[string]float64, len(labels))
	for i := range stacks {
		stacks[i] = map[string]float64{}
	}
	for _, p := range points {
		stacks[p.Bucket][group[p.Key]] += m.Of(p)
	}
	top := 0.0
	for _, s := range stacks {
		sum := 0.0
		for _, v := range s {
			sum += v
		}
		top = math.Max(top, sum)
	}
	top = niceCeil(top)
	plotW, plotH := chartW-chartLeft-chartRight, chartH-chartTop-chartBottom
	slot := plotW / float64(len(labels))
	order := legendOrder(keys)
	for i, s := range stacks {
		y := chartTop + plotH
		for _, g := range order {
			v := s[g]
			if v <= 0 {
				continue
			}
			h := plotH * v / top
			y -= h
			c.Bars = append(c.Bars, chartBar{X: round1(chartLeft + float64(i)*slot + slot*0.15), Y: round1(y), W: round1(slot * 0.7), H: round1(h),
				Fill: fill[g], Title: fmt.Sprintf("%s, %s: %s", g, labels[i], m.Format(v))})
		}
	}
	for i := range 5 {
		v := top * float64(i) / 4
		c.Grid = append(c.Grid, chartLine{Y: round1(chartTop + plotH - plotH*float64(i)/4), Label: m.Format(v)})
	}
	step := (len(labels) + chartXLabels - 1) / chartXLabels
	for i := 0; i < len(labels); i += step {
		c.Ticks = append(c.Ticks, chartTick{X: round1(chartLeft + (float64(i)+0.5)*slot), Label: labels[i]})
	}
	var parts []string
	for _, g := range order {
		t := 0.0
		for _, k := range keys {
			if group[k] == g {
				t += totals[k]
			}
		}
		c.Legend = append(c.Legend, chartKey{Key: g, Fill: fill[g], Total: m.Format(t)})
		parts = append(parts, g+" "+m.Format(t))
	}
	c.Label = title + ": " + strings.Join(parts, ", ")
	return c
}

// groups names the largest chartGroups keys and folds the rest into
// "other", with each group's fill.
func groups(keys []string) (map[string]string, map[string]string) {
	group, fill := map[string]string{}, map[string]string{}
	for i, k := range keys {
		if i < chartGroups || len(keys) == chartGroups+1 {
			group[k], fill[k] = k, chartColors[i%len(chartColors)]
			continue
		}
		group[k], fill[chartOther] = chartOther, chartPalette
	}
	return group, fill
}

// legendOrder is the groups largest first, "other" last.
func legendOrder(keys []string) []string {
	n := min(len(keys), chartGroups)
	if len(keys) == chartGroups+1 {
		n = len(keys)
	}
	order := slices.Clone(keys[:n])
	if n < len(keys) {
		order = append(order, chartOther)
	}
	return order
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so grid
// lines fall on round numbers; 1 for nothing.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

package metrics

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Prometheus text format (version 0.0.4), written by hand: counters,
// gauges and histograms, with labels, are all the server exports, and
// client_golang's registry and its dependencies cost every start of the
// server more than the whole of what is here.

// family is one metric family: its name, help, type and series.
type family interface {
	write(w *bufio.Writer)
}

// sample is one series' value: its labels (names and values paired) and value.
type sample struct {
	labels []string
	value  float64
}

// writeFamily writes one family's header and samples, the labels of each
// sorted by name, and the samples in order of their labels.
func writeFamily(w *bufio.Writer, name, help, typ string, samples []sample) {
	w.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n")
	w.WriteString("# TYPE " + name + " " + typ + "\n")
	for _, s := range samples {
		writeSample(w, name, s.labels, s.value)
	}
}

func writeSample(w *bufio.Writer, name string, labels []string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 {
		w.WriteByte('{')
		for i := 0; i < len(labels); i += 2 {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

// pairs zips label names with values and sorts the pairs by name, as the
// format's readers expect one series to be written alike each time.
func pairs(names, values []string) []string {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	out := make([]string, 0, 2*len(names))
	for _, i := range idx {
		out = append(out, names[i], values[i])
	}
	return out
}

// floatCounter is a float64 added to atomically.
type floatCounter struct{ bits atomic.Uint64 }

func (c *floatCounter) add(v float64) {
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (c *floatCounter) load() float64 { return math.Float64frombits(c.bits.Load()) }

// labelKey holds up to two label values: no family here has more, and a
// fixed array is a map key that costs no allocation to look up.
type labelKey [2]string

// fitsKey refuses, when a family is declared, more labels than a
// labelKey holds: the values past it would be dropped and series merged.
func fitsKey(name string, labels []string) {
	if len(labels) > len(labelKey{}) {
		panic(fmt.Sprintf("metrics: %s has %d labels; a labelKey holds %d", name, len(labels), len(labelKey{})))
	}
}

// counterVec is a counter per combination of label values.
type counterVec struct {
	name, help string
	labels     []string
	mu         sync.RWMutex
	series     map[labelKey]*floatCounter
}

func newCounterVec(name, help string, labels ...string) *counterVec {
	fitsKey(name, labels)
	return &counterVec{name: name, help: help, labels: labels, series: map[labelKey]*floatCounter{}}
}

func (v *counterVec) with(values ...string) *floatCounter {
	var k labelKey
	copy(k[:], values)
	v.mu.RLock()
	c := v.series[k]
	v.mu.RUnlock()
	if c != nil {
		return c
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c = v.series[k]; c == nil {
		c = &floatCounter{}
		v.series[k] = c
	}
	return c
}

func (v *counterVec) write(w *bufio.Writer) {
	v.mu.RLock()
	samples := make([]sample, 0, len(v.series))
	for k, c := range v.series {
		samples = append(samples, sample{labels: pairs(v.labels, k[:len(v.labels)]), value: c.load()})
	}
	v.mu.RUnlock()
	sortSamples(samples)
	writeFamily(w, v.name, v.help, "counter", samples)
}

func sortSamples(s []sample) {
	slices.SortFunc(s, func(a, b sample) int { return slices.Compare(a.labels, b.labels) })
}

// gauge is a value that goes up and down.
type gauge struct {
	name, help string
	v          atomic.Int64
}

func (g *gauge) write(w *bufio.Writer) {
	writeFamily(w, g.name, g.help, "gauge", []sample{{value: float64(g.v.Load())}})
}

// histogram counts observations into cumulative buckets, per
// combination of label values.
type histogram struct {
	name, help string
	labels     []string
	buckets    []float64 // upper bounds, ascending; +Inf is implied
	mu         sync.RWMutex
	series     map[labelKey]*histSeries
}

type histSeries struct {
	counts []atomic.Uint64 // one per bucket, not cumulative
	count  atomic.Uint64
	sum    floatCounter
}

// defBuckets are Prometheus' default latency buckets, in seconds.
var defBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func newHistogram(name, help string, buckets []float64, labels ...string) *histogram {
	fitsKey(name, labels)
	return &histogram{name: name, help: help, labels: labels, buckets: buckets, series: map[labelKey]*histSeries{}}
}

func (h *histogram) observe(v float64, values ...string) {
	var k labelKey
	copy(k[:], values)
	h.mu.RLock()
	s := h.series[k]
	h.mu.RUnlock()
	if s == nil {
		h.mu.Lock()
		if s = h.series[k]; s == nil {
			s = &histSeries{counts: make([]atomic.Uint64, len(h.buckets))}
			h.series[k] = s
		}
		h.mu.Unlock()
	}
	if i, _ := slices.BinarySearch(h.buckets, v); i < len(h.buckets) {
		s.counts[i].Add(1)
	}
	s.sum.add(v)
	s.count.Add(1)
}

func (h *histogram) write(w *bufio.Writer) {
	h.mu.RLock()
	keys := slices.Collect(maps.Keys(h.series))
	series := maps.Clone(h.series)
	h.mu.RUnlock()
	slices.SortFunc(keys, func(a, b labelKey) int { return slices.Compare(a[:], b[:]) })
	w.WriteString("# HELP " + h.name + " " + escapeHelp(h.help) + "\n")
	w.WriteString("# TYPE " + h.name + " histogram\n")
	for _, k := range keys {
		s := series[k]
		labels := pairs(h.labels, k[:len(h.labels)])
		var cum uint64
		for i, le := range h.buckets {
			cum += s.counts[i].Load()
			writeSample(w, h.name+"_bucket", append(slices.Clone(labels), "le", formatFloat(le)), float64(cum))
		}
		n := s.count.Load()
		writeSample(w, h.name+"_bucket", append(slices.Clone(labels), "le", "+Inf"), float64(n))
		writeSample(w, h.name+"_sum", labels, s.sum.load())
		writeSample(w, h.name+"_count", labels, float64(n))
	}
}

// writeAll writes families in the order given.
func writeAll(out io.Writer, fams []family) error {
	w := bufio.NewWriter(out)
	for _, f := range fams {
		f.write(w)
	}
	return w.Flush()
}

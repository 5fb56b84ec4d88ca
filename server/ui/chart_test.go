package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestNiceCeil(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want float64 }{
		{0, 1}, {-3, 1}, {1, 1}, {1.2, 2}, {2, 2}, {2.1, 2.5}, {3, 5}, {7, 10}, {0.034, 0.05}, {120, 200}, {9500, 10000},
	}
	for _, tt := range tests {
		if got := niceCeil(tt.in); fmt.Sprintf("%.6g", got) != fmt.Sprintf("%.6g", tt.want) {
			t.Errorf("niceCeil(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// tokens counts points in tokens, for charts under test.
var tokens = measure{Name: "Tokens", Of: func(p store.SeriesPoint) float64 { return float64(p.Tokens()) },
	Format: func(v float64) string { return domain.Thousands(int64(v)) }}

func pt(bucket int, key string, n int64) store.SeriesPoint {
	return store.SeriesPoint{Bucket: bucket, Key: key, Spend: domain.Spend{InputTokens: n}}
}

// TestStackedBars: each bucket's bar (160 units of plot high) is its groups stacked, tallest group
// first at the bottom, scaled to a round top; past five groups the
// smallest fold into "other"; a chart with nothing spent says so.
func TestStackedBars(t *testing.T) {
	t.Parallel()
	labels := []string{"a", "b", "c", "d"}
	tests := []struct {
		name   string
		points []store.SeriesPoint
		legend []string
		bars   []string // key@bucket=height, bottom up per bucket
		top    string
	}{
		{"two groups over two buckets",
			[]store.SeriesPoint{pt(0, "w-b", 100), pt(0, "w-a", 300), pt(2, "w-a", 50), pt(9, "w-a", 999)},
			[]string{"w-a 350", "w-b 100"}, []string{"w-a@a=96", "w-b@a=32", "w-a@c=16"}, "500"},
		{"seven groups: five named, two other",
			[]store.SeriesPoint{pt(0, "k1", 70), pt(0, "k2", 60), pt(0, "k3", 50), pt(0, "k4", 40), pt(0, "k5", 30), pt(0, "k6", 20), pt(0, "k7", 10)},
			[]string{"k1 70", "k2 60", "k3 50", "k4 40", "k5 30", "other 30"},
			[]string{"k1@a=22.4", "k2@a=19.2", "k3@a=16", "k4@a=12.8", "k5@a=9.6", "other@a=9.6"}, "500"},
		{"six groups: all named, no other of one",
			[]store.SeriesPoint{pt(1, "k1", 6), pt(1, "k2", 5), pt(1, "k3", 4), pt(1, "k4", 3), pt(1, "k5", 2), pt(1, "k6", 1)},
			[]string{"k1 6", "k2 5", "k3 4", "k4 3", "k5 2", "k6 1"},
			[]string{"k1@b=38.4", "k2@b=32", "k3@b=25.6", "k4@b=19.2", "k5@b=12.8", "k6@b=6.4"}, "25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stackedBars("By worker", labels, tt.points, tokens)
			var legend, bars []string
			for _, k := range c.Legend {
				legend = append(legend, k.Key+" "+k.Total)
			}
			for _, b := range c.Bars {
				key, _, _ := strings.Cut(b.Title, ",")
				bucket := labels[int((b.X-chartLeft)/((chartW-chartLeft-chartRight)/float64(len(labels))))]
				bars = append(bars, fmt.Sprintf("%s@%s=%g", key, bucket, b.H))
			}
			if diff := cmp.Diff(tt.legend, legend); diff != "" {
				t.Errorf("legend (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bars, bars); diff != "" {
				t.Errorf("bars (-want +got):\n%s", diff)
			}
			if got := c.Grid[len(c.Grid)-1].Label; got != tt.top {
				t.Errorf("top grid line = %s, want %s", got, tt.top)
			}
		})
	}
	if c := stackedBars("By model", labels, []store.SeriesPoint{pt(0, "m", 0)}, tokens); !c.Empty || c.Label != "By model: nothing spent" || len(c.Bars) != 0 {
		t.Errorf("a chart of nothing = %+v, want it empty and saying so", c)
	}
}

func TestNewMeter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		part, whole, soft float64
		want              meter
	}{
		{250, 1000, 800, meter{Fill: 25, Soft: 80}},
		{1500, 1000, 0, meter{Fill: 100}},
		{5, 0, 0, meter{}},
	}
	for _, tt := range tests {
		if got := newMeter(tt.part, tt.whole, tt.soft, "", ""); got != tt.want {
			t.Errorf("newMeter(%v, %v, %v) = %+v, want %+v", tt.part, tt.whole, tt.soft, got, tt.want)
		}
	}
}

package ui

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// TestLayoutOrg: leaves take columns left to right in the chart's order,
// each position is centred over its reports, each level is a row below
// the tallest card of the one above, and the picture holds every card.
func TestLayoutOrg(t *testing.T) {
	t.Parallel()
	node := func(id string, workers int, children ...*orgNode) *orgNode {
		n := &orgNode{Position: domain.Position{ID: id}, Children: children}
		for range workers {
			n.Workers = append(n.Workers, workerCard{})
		}
		return n
	}
	col := func(i int) int { return graphPad + i*(cardW+gapX) } // left edge of leaf column i
	type at struct{ X, Y int }
	row1 := graphPad + cardHeight(node("", 1), false) + gapY
	row2 := row1 + cardHeight(node("", 3), false) + gapY
	cases := []struct {
		name  string
		roots []*orgNode
		want  map[string]at
		w     int
	}{
		{name: "one position", roots: []*orgNode{node("p-owner", 1)}, want: map[string]at{"p-owner": {col(0), graphPad}}, w: col(1) - gapX + graphPad},
		{name: "a parent over the middle of its reports; a row as tall as its tallest card",
			roots: []*orgNode{node("p-owner", 1, node("p-a", 1, node("p-a1", 0), node("p-a2", 0)), node("p-b", 3))},
			want: map[string]at{"p-a1": {col(0), row2}, "p-a2": {col(1), row2}, "p-a": {(col(0) + col(1)) / 2, row1},
				"p-b": {col(2), row1}, "p-owner": {((col(0)+col(1))/2 + col(2)) / 2, graphPad}},
			w: col(3) - gapX + graphPad},
		{name: "roots side by side", roots: []*orgNode{node("p-owner", 1), node("p-loop", 1)},
			want: map[string]at{"p-owner": {col(0), graphPad}, "p-loop": {col(1), graphPad}}, w: col(2) - gapX + graphPad},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := layoutOrg(tc.roots, false)
			got := map[string]at{}
			for _, c := range g.Cards {
				got[c.Node.Position.ID] = at{c.X, c.Y}
				if c.X+c.W > g.W || c.Y+c.H > g.H {
					t.Errorf("%s at %d,%d (%dx%d) is outside the %dx%d picture", c.Node.Position.ID, c.X, c.Y, c.W, c.H, g.W, g.H)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("card positions (-want +got):\n%s", diff)
			}
			if g.W != tc.w {
				t.Errorf("width = %d, want %d", g.W, tc.w)
			}
		})
	}
}

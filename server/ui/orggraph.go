package ui

import (
	"fmt"
	"strings"
)

// The org chart drawn as a graph: cards laid out on the server as a
// tidy tree — each leaf takes the next column, a position sits centred
// over its reports, and each level of the chart is a row — and drawn as
// SVG, so the browser only paints.
const (
	cardW    = 224
	gapX     = 24
	gapY     = 44
	graphPad = 12
	// lineH is one line of a card; a card has a title line, a role line,
	// a line per worker (or "vacant") and, for those who may, actions.
	lineH    = 20
	cardHead = 52
	cardFoot = 10
)

type orgGraph struct {
	W, H  int
	Cards []graphCard
	// Edges are SVG path data, one elbow from each position to a report.
	Edges []string
}

// graphCard is one position's card, every coordinate worked out: TX is
// where its text starts, EX where right-aligned text ends.
type graphCard struct {
	X, Y, W, H, TX, EX int
	TitleY, RoleY      int
	Node               *orgNode
	Workers            []graphWorker
	VacantY, ActionsY  int
}

// graphWorker is one line of a card: a worker and its status.
type graphWorker struct {
	Y int
	workerCard
	// Label is the status as a card has room for it; Tip says it whole.
	Label, Tip string
}

// layoutOrg places every position of the forest. actions says whether a
// card has a line of links (hire here, add a report).
func layoutOrg(roots []*orgNode, actions bool) orgGraph {
	heights := map[int]int{} // the tallest card on each level
	var measure func(n *orgNode, depth int)
	measure = func(n *orgNode, depth int) {
		heights[depth] = max(heights[depth], cardHeight(n, actions))
		for _, c := range n.Children {
			measure(c, depth+1)
		}
	}
	for _, r := range roots {
		measure(r, 0)
	}
	rowY := []int{graphPad}
	for d := 0; d < len(heights); d++ {
		rowY = append(rowY, rowY[d]+heights[d]+gapY)
	}
	g := orgGraph{}
	leaves := 0
	// place returns the x of n's centre, after placing its reports.
	var place func(n *orgNode, depth int) int
	place = func(n *orgNode, depth int) int {
		var cx int
		if len(n.Children) == 0 {
			cx = graphPad + leaves*(cardW+gapX) + cardW/2
			leaves++
		} else {
			xs := make([]int, len(n.Children))
			for i, c := range n.Children {
				xs[i] = place(c, depth+1)
			}
			cx = (xs[0] + xs[len(xs)-1]) / 2
			top, bottom := rowY[depth]+cardHeight(n, actions), rowY[depth+1]
			for _, x := range xs {
				g.Edges = append(g.Edges, fmt.Sprintf("M%d %dV%dH%dV%d", cx, top, bottom-gapY/2, x, bottom))
			}
		}
		g.Cards = append(g.Cards, newCard(n, cx-cardW/2, rowY[depth], actions))
		return cx
	}
	for _, r := range roots {
		place(r, 0)
	}
	g.W = graphPad*2 + max(leaves, 1)*(cardW+gapX) - gapX
	g.H = rowY[len(rowY)-1] - gapY + graphPad
	return g
}

func cardHeight(n *orgNode, actions bool) int {
	h := cardHead + lineH*max(len(n.Workers), 1) + cardFoot
	if actions {
		h += lineH
	}
	return h
}

func newCard(n *orgNode, x, y int, actions bool) graphCard {
	c := graphCard{X: x, Y: y, W: cardW, H: cardHeight(n, actions), TX: x + 12, EX: x + cardW - 12, TitleY: y + 22, RoleY: y + 40, Node: n}
	line := y + cardHead + lineH - 4
	for _, w := range n.Workers {
		c.Workers = append(c.Workers, graphWorker{Y: line, workerCard: w, Label: graphLabel(w), Tip: graphTip(w)})
		line += lineH
	}
	if len(n.Workers) == 0 {
		c.VacantY, line = line, line+lineH
	}
	if actions {
		c.ActionsY = line
	}
	return c
}

// graphLabel is a status short enough for a card: "waiting for budget"
// and "waiting for approval" are both "waiting" there, with the rest in
// the tip; a person has no status.
func graphLabel(w workerCard) string {
	if first, _, _ := strings.Cut(w.Status, " "); first == "waiting" {
		return first
	}
	return w.Status
}

func graphTip(w workerCard) string {
	tip := w.Name + " (" + w.ID + ")"
	if w.Status != "" {
		tip += ": " + w.Status
	}
	if w.Why != "" {
		tip += " — " + w.Why
	}
	return tip
}

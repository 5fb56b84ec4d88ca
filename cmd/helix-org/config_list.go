package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"unicode/utf8"

	"golang.org/x/term"
)

// config list's table is for reading in a terminal: a value longer than
// listValueRunes, and a description past the width, are cut with …
// (config get and -o json|yaml print them whole). Off a terminal (a pager,
// a file) it fits listWidth columns.
const (
	listWidth      = 120
	listValueRunes = 24
	// listDescRunes is the least of a description shown, however narrow
	// the terminal: a row may overflow rather than say nothing.
	listDescRunes = 20
)

// configRow is one row of config list's table.
type configRow struct{ key, value, typ, desc string }

// tableWidth is the width of the terminal w writes to, or listWidth.
func tableWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return listWidth
}

// writeConfigTable prints rows in width columns, cutting descriptions to
// what the other columns leave, and reports whether it cut any.
func writeConfigTable(w io.Writer, rows []configRow, width int) (cut bool, err error) {
	header := configRow{"KEY", "VALUE", "TYPE", "DESCRIPTION"}
	keyW, valW, typW := runes(header.key), runes(header.value), runes(header.typ)
	for _, r := range rows {
		keyW, valW, typW = max(keyW, runes(r.key)), max(valW, runes(r.value)), max(typW, runes(r.typ))
	}
	descW := max(width-keyW-valW-typW-3*2, listDescRunes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range append([]configRow{header}, rows...) {
		desc := fit(r.desc, descW)
		cut = cut || desc != r.desc
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.key, r.value, r.typ, desc)
	}
	return cut, tw.Flush()
}

// fit cuts s to n runes, the last of them …, when it is longer.
func fit(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	return clipRunes(s, n-1)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

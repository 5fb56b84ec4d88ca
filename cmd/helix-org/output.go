package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// Output formats for -o.
const (
	outJSON  = "json"
	outYAML  = "yaml"
	outTable = "table"
)

// outputFlag is -o/--output, refusing a format the command does not print.
type outputFlag struct {
	value   *string
	formats []string
}

func (o outputFlag) String() string { return *o.value }
func (o outputFlag) Type() string   { return "format" }
func (o outputFlag) Set(v string) error {
	if !slices.Contains(o.formats, v) {
		return fmt.Errorf("valid: %s", strings.Join(o.formats, ", "))
	}
	*o.value = v
	return nil
}

// bindOutput adds -o to cmd, with its formats offered by completion. An
// empty value is the command's human-readable default.
func bindOutput(cmd *cobra.Command, p *string, formats ...string) {
	cmd.Flags().VarP(outputFlag{value: p, formats: formats}, "output", "o", "output format: "+strings.Join(formats, ", "))
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// printJSON writes v as indented JSON, with <, > and & as themselves
// (a role's `<body>`, not `\u003cbody\u003e`); nil slices print as [] so
// a script always gets the shape it expects.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printYAML writes v as YAML, keeping the order of its JSON fields.
func printYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	n, err := yamlNode(b)
	if err != nil {
		return err
	}
	return encodeYAML(w, n)
}

func encodeYAML(w io.Writer, n *yaml.Node) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return err
	}
	return enc.Close()
}

// yamlNode turns JSON into a YAML node tree in the JSON's own field order,
// numbers as written and multi-line strings as literal blocks.
func yamlNode(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return nodeOf(dec)
}

func nodeOf(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if t == '{' {
			n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.(string)})
			}
			v, err := nodeOf(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}
		if strings.Contains(t, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
}

// listShaped finds the list in a result: a list of objects, or an object
// holding exactly one such list beside scalar fields ({"roles": […]},
// {"events": […], "cursor": 37}). It returns the list's name, its rows
// and the other fields.
func listShaped(n *yaml.Node) (name string, rows []*yaml.Node, rest [][2]*yaml.Node, ok bool) {
	isRows := func(n *yaml.Node) bool {
		return n.Kind == yaml.SequenceNode && !slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return c.Kind != yaml.MappingNode })
	}
	if isRows(n) {
		return "", n.Content, nil, true
	}
	if n.Kind != yaml.MappingNode {
		return "", nil, nil, false
	}
	found := false
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case isRows(v) && !found:
			name, rows, found = k.Value, v.Content, true
		case v.Kind == yaml.ScalarNode:
			rest = append(rest, [2]*yaml.Node{k, v})
		default:
			return "", nil, nil, false
		}
	}
	return name, rows, rest, found
}

// printTable writes rows of objects as a table: one column per field, in
// the rows' field order (id first); nested values as compact JSON; every cell on
// one line and clipped.
func printTable(w io.Writer, name string, rows []*yaml.Node, rest [][2]*yaml.Node) error {
	if len(rows) == 0 {
		if name == "" {
			name = "results"
		}
		fmt.Fprintf(w, "No %s.\n", name)
	} else {
		cols := columns(rows)
		// A record's id names it: first, whatever the field order.
		if i := slices.Index(cols, "id"); i > 0 {
			cols = slices.Insert(slices.Delete(cols, i, i+1), 0, "id")
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
		for _, r := range rows {
			cells := make([]string, len(cols))
			for i := 0; i < len(r.Content); i += 2 {
				cells[slices.Index(cols, r.Content[i].Value)] = cell(r.Content[i+1])
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, kv := range rest {
		fmt.Fprintf(w, "%s: %s\n", kv[0].Value, cell(kv[1]))
	}
	return nil
}

// columns are the rows' fields in the order the rows agree on: a field
// before another wherever a row holds both. By first appearance alone, a
// field the first row leaves out (an event's causedBy, omitted when
// empty) would move to the end, and the columns would change from page
// to page. Where rows disagree, or never meet, first appearance decides.
func columns(rows []*yaml.Node) []string {
	var keys []string
	next := map[string][]string{}
	preceded := map[string]int{} // how many fields a row puts before it
	for _, r := range rows {
		prev := ""
		for i := 0; i < len(r.Content); i += 2 {
			k := r.Content[i].Value
			if _, seen := preceded[k]; !seen {
				keys, preceded[k] = append(keys, k), 0
			}
			if prev != "" && !slices.Contains(next[prev], k) {
				next[prev] = append(next[prev], k)
				preceded[k]++
			}
			prev = k
		}
	}
	cols := make([]string, 0, len(keys))
	for len(cols) < len(keys) {
		i := slices.IndexFunc(keys, func(k string) bool { return preceded[k] == 0 })
		if i < 0 { // the rows disagree on the order of what is left
			for _, k := range keys {
				if preceded[k] >= 0 {
					cols = append(cols, k)
				}
			}
			break
		}
		k := keys[i]
		cols, preceded[k] = append(cols, k), -1
		for _, n := range next[k] {
			preceded[n]--
		}
	}
	return cols
}

// cell is one table cell: a scalar as is, anything else as compact JSON.
func cell(n *yaml.Node) string {
	s := n.Value
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		s = ""
	case n.Kind != yaml.ScalarNode:
		var v any
		n.Decode(&v)
		b, _ := json.Marshal(v)
		s = string(b)
	}
	return oneLine(clipRunes(s, 60))
}

// clipRunes shortens s to n runes, never splitting a character.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// dataFormats are what every command that prints data takes for -o.
var dataFormats = []string{outJSON, outYAML, outTable}

// bindData adds -o json|yaml|table (and any formats of its own) to a
// command that prints data, and --json (hidden) as the older spelling of
// -o json.
func bindData(cmd *cobra.Command, p *string, more ...string) {
	bindOutput(cmd, p, append(slices.Clone(dataFormats), more...)...)
	cmd.Flags().Var(jsonAlias{p}, "json", "same as -o json")
	cmd.Flags().Lookup("json").NoOptDefVal = "true"
	cmd.Flags().MarkHidden("json")
}

// jsonAlias is --json: a boolean flag that sets -o's value.
type jsonAlias struct{ p *string }

func (j jsonAlias) String() string   { return strconv.FormatBool(*j.p == outJSON) }
func (j jsonAlias) Type() string     { return "bool" }
func (j jsonAlias) IsBoolFlag() bool { return true }
func (j jsonAlias) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if on {
		*j.p = outJSON
	}
	return nil
}

// emit prints v as -o asks: JSON or YAML of v; the table, or nothing
// given, is the command's own human-readable form.
func emit(w io.Writer, format string, v any, human func() error) error {
	switch format {
	case outJSON:
		return printJSON(w, v)
	case outYAML:
		return printYAML(w, v)
	}
	return human()
}

// writeTable prints rows under header, each as line formats it (columns
// tab-separated, aligned); with no rows, only empty: what to do instead.
func writeTable[T any](w io.Writer, rows []T, empty, header string, line func(T) string) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, line(r))
	}
	return tw.Flush()
}

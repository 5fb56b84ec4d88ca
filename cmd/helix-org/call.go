package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
)

type callConfig struct {
	clientFlags
	Output string
	// ExistsOK makes "already exists" a success, so a setup script that
	// creates things by id can run again.
	ExistsOK bool
}

func newCallCmd() *cobra.Command {
	var cfg callConfig
	cmd := &cobra.Command{
		Use:   "call <tool> [json | - | key=value...]",
		Short: "Call an MCP tool as a worker, over the server's real endpoint, and print the result",
		Long: `call calls one tool on a worker's MCP endpoint (--worker, default w-owner),
exactly as an MCP client would: the worker's grants and place in the org
chart apply. The arguments are a JSON object, - to read one from stdin, or
key=value pairs (a value is taken as a string where the tool's schema says
string, else as JSON: n=3, to='["w-maya"]').

The token is --token or $HELIX_ORG_TOKEN; without either, call opens the
database and mints a token for the worker — only when --url is on
loopback, so it never leaves the machine — that expires at --timeout and is
revoked when the call ends, or at once on SIGINT or SIGTERM.

A list-shaped result prints as a table, anything else as YAML; -o json or
-o yaml prints it whole. A tool error exits non-zero with the error's text.`,
		Example: `  helix-org call list_roles
  helix-org call publish stream=s-inbox subject=hi body='hello there'
  helix-org call create_role '{"title":"Echo","content":"Reply echo."}'
  helix-org call read_events - -o json < args.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd, cfg, args[0], args[1:])
		},
	}
	cfg.bind(cmd)
	bindOutput(cmd, &cfg.Output, outJSON, outYAML, outTable)
	cmd.Flags().BoolVar(&cfg.ExistsOK, "exists-ok", false, "answer success when the tool says what it would create already exists (for setup scripts run again)")
	cmd.ValidArgsFunction = cfg.completeCall
	return cmd
}

func runCall(cmd *cobra.Command, cfg callConfig, tool string, args []string) error {
	stdin := cmd.InOrStdin()
	if len(args) == 1 && args[0] == "-" {
		// Read before a token is minted: one must not wait on a pipe.
		b, err := readAll(cmd.Context(), stdin)
		if err != nil {
			return fmt.Errorf("read arguments from stdin: %w", err)
		}
		stdin = bytes.NewReader(b)
	}
	ctx, cs, closeSession, err := cfg.connect(cmd.Context())
	if err != nil {
		return err
	}
	defer closeSession()
	in, err := callArgs(tool, stdin, args, func() map[string]string { return propertyTypes(ctx, cs, tool) })
	if err != nil {
		return err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: in})
	if err != nil {
		if uerr := unknownTool(ctx, cs, tool); uerr != nil {
			return uerr
		}
		return fmt.Errorf("call %s: %w", tool, err)
	}
	data, isJSON := resultData(res)
	if res.IsError {
		msg := strings.TrimSpace(string(data))
		if cfg.ExistsOK && strings.Contains(msg, "already exists") {
			_, err := fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s (--exists-ok: left as it is)\n", tool, msg)
			return err
		}
		return fmt.Errorf("%s: %s", tool, msg)
	}
	out := &keptError{w: cmd.OutOrStdout()}
	if !isJSON {
		_, err = fmt.Fprintln(out, strings.TrimRight(string(data), "\n"))
	} else {
		err = printResult(out, data, cfg.Output)
	}
	if out.err != nil {
		// As written: the YAML encoder's error keeps only its text, and
		// main must see a closed stdout (EPIPE) to end quietly.
		return out.err
	}
	return err
}

// keptError is a writer that keeps the first error writing returned.
type keptError struct {
	w   io.Writer
	err error
}

func (k *keptError) Write(b []byte) (int, error) {
	n, err := k.w.Write(b)
	if err != nil && k.err == nil {
		k.err = err
	}
	return n, err
}

// unknownTool says so when the worker holds no tool of that name,
// suggesting the nearest it holds; nil when it holds one, or the list
// cannot be had. The SDK answers only a protocol error in its own words.
func unknownTool(ctx context.Context, cs *mcp.ClientSession, tool string) error {
	ts, err := toolsOf(ctx, cs)
	if err != nil || slices.ContainsFunc(ts, func(t *mcp.Tool) bool { return t.Name == tool }) {
		return nil
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	if near := domain.Nearest(tool, names); near != "" {
		return fmt.Errorf("unknown tool %q; did you mean %q? (helix-org tools lists the tools you hold)", tool, near)
	}
	return fmt.Errorf("unknown tool %q (helix-org tools lists the tools you hold)", tool)
}

// readAll reads r to its end, or returns when ctx ends (a signal): a
// read from a terminal or an idle pipe cannot be interrupted otherwise.
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- read{b, err}
	}()
	select {
	case got := <-done:
		return got.b, got.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// callArgs builds the arguments object from the command line. types is
// asked for the tool's property types only when key=value pairs need them.
func callArgs(tool string, stdin io.Reader, args []string, types func() map[string]string) (map[string]any, error) {
	in := map[string]any{}
	switch {
	case len(args) == 0:
		return in, nil
	case len(args) == 1 && (args[0] == "-" || strings.HasPrefix(strings.TrimSpace(args[0]), "{")):
		raw := []byte(args[0])
		if args[0] == "-" {
			var err error
			if raw, err = io.ReadAll(stdin); err != nil {
				return nil, fmt.Errorf("read arguments from stdin: %w", err)
			}
		}
		if err := json.Unmarshal(raw, &in); err != nil || in == nil {
			return nil, fmt.Errorf("arguments are not a JSON object: %s", firstLine(raw))
		}
		return in, nil
	}
	var props map[string]string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: want key=value, a JSON object, or - (stdin)", a)
		}
		if props == nil {
			props = types()
		}
		in[k] = argValue(v, props[k])
		if err := wrongType(tool, k, v, in[k], props[k]); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// wrongType says how to write a key=value value that is not of the type
// the tool's schema gives, in the caller's terms: the server would name
// the JSON type, not how to write it on a command line.
func wrongType(tool, k, v string, val any, typ string) error {
	var got string
	switch val.(type) {
	case nil:
		return nil // null: whether it will do is the server's to say
	case []any:
		got = "array"
	case map[string]any:
		got = "object"
	case float64:
		got = "number"
	case bool:
		got = "boolean"
	case string:
		got = "string"
	}
	if typ == "integer" {
		typ = "number"
	}
	switch {
	case typ == "" || typ == got:
		return nil
	case typ == "array":
		list, _ := json.Marshal(append([]string{}, strings.FieldsFunc(v, func(r rune) bool { return r == ',' })...))
		return fmt.Errorf("%s: %s takes a list here; write %s='%s'", k, tool, k, list)
	case typ == "object":
		return fmt.Errorf("%s: %s takes an object here; write %s='{\"name\":\"value\"}'", k, tool, k)
	case typ == "number":
		return fmt.Errorf("%s: %s takes a number here, e.g. %s=10", k, tool, k)
	case typ == "boolean":
		return fmt.Errorf("%s: %s takes true or false here, e.g. %s=true", k, tool, k)
	}
	return nil
}

// argValue reads a key=value value: JSON where the schema gives a type
// other than string (a number, a list); where it gives none (a skill's
// schema may not) a string unless the value is a JSON object or list.
func argValue(v, typ string) any {
	if typ == "string" {
		return v
	}
	var j any
	if json.Unmarshal([]byte(v), &j) != nil {
		return v
	}
	switch j.(type) {
	case map[string]any, []any:
		return j
	}
	if typ == "" {
		return v
	}
	return j
}

// propertyTypes maps each of a tool's input properties to its JSON type,
// from the schema tools/list gives; empty when the tool is not listed.
func propertyTypes(ctx context.Context, cs *mcp.ClientSession, tool string) map[string]string {
	out := map[string]string{}
	ts, err := toolsOf(ctx, cs)
	if err != nil {
		return out
	}
	i := slices.IndexFunc(ts, func(t *mcp.Tool) bool { return t.Name == tool })
	if i < 0 {
		return out
	}
	for name, p := range schemaProperties(ts[i].InputSchema) {
		if typ, ok := p["type"].(string); ok {
			out[name] = typ
		}
	}
	return out
}

// schemaProperties is the properties object of an input schema.
func schemaProperties(schema any) map[string]map[string]any {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	json.Unmarshal(b, &s)
	return s.Properties
}

// resultData is what a tool answered: its text, which our tools write as
// JSON in their fields' order, else its structured content; and whether
// that is JSON.
func resultData(res *mcp.CallToolResult) ([]byte, bool) {
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	data := []byte(strings.Join(text, "\n"))
	if !json.Valid(data) && res.StructuredContent != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		return b, err == nil
	}
	return data, json.Valid(data)
}

// printResult prints JSON data in the chosen format; the default is a
// table for a list-shaped result and YAML for anything else.
func printResult(w io.Writer, data []byte, format string) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if format == outJSON {
		return printJSON(w, v)
	}
	n, err := yamlNode(data)
	if err != nil {
		return err
	}
	if format != outYAML {
		if name, rows, rest, ok := listShaped(n); ok {
			return printTable(w, name, rows, rest)
		}
	}
	return encodeYAML(w, n)
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty)"
	}
	return oneLine(clip(s, 80))
}

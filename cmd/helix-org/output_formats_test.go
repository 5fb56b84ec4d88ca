package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestEveryDataCommandTakesOutput: each command that prints data takes
// -o json, yaml and table: the JSON (with <, > and & as written) and the
// YAML say the same, --json is
// -o json, the table is the command's own listing, and another format is
// refused naming the valid ones.
func TestEveryDataCommandTakesOutput(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	run := func(args ...string) (string, error) {
		cmd := newRootCmd()
		var out, errOut bytes.Buffer
		cmd.SetArgs(append(args, "--db", db))
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(t.Context())
		return out.String(), err
	}
	for _, args := range [][]string{
		{"activations"}, {"triggers"}, {"token", "list"}, {"config", "list"}, {"config", "get", "agent.runtime"},
		{"spend"}, {"tasks"}, {"audit"}, {"mcp-servers", "list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := map[string]string{}
			for _, f := range []string{"json", "yaml", "table", ""} {
				a := args
				if f != "" {
					a = append(append([]string{}, args...), "-o", f)
				}
				got, err := run(a...)
				if err != nil {
					t.Fatalf("%v: %v", a, err)
				}
				out[f] = got
			}
			// <, > and & as written (config list's descriptions hold them).
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if strings.Contains(out["json"], esc) {
					t.Errorf("-o json escapes for HTML (%s):\n%s", esc, out["json"])
				}
			}
			var fromJSON, fromYAML any
			if err := json.Unmarshal([]byte(out["json"]), &fromJSON); err != nil {
				t.Fatalf("-o json is not JSON: %v\n%s", err, out["json"])
			}
			if err := yaml.Unmarshal([]byte(out["yaml"]), &fromYAML); err != nil {
				t.Fatalf("-o yaml is not YAML: %v\n%s", err, out["yaml"])
			}
			if diff := cmp.Diff(normal(t, fromJSON), normal(t, fromYAML)); diff != "" {
				t.Errorf("-o yaml says other than -o json (-json +yaml):\n%s", diff)
			}
			if out["table"] != out[""] || out[""] == "" {
				t.Errorf("-o table = %q, want the listing %q", out["table"], out[""])
			}
			if alias, err := run(append(append([]string{}, args...), "--json")...); err != nil || alias != out["json"] {
				t.Errorf("--json = %q, %v; want -o json's output", alias, err)
			}
			if _, err := run(append(append([]string{}, args...), "-o", "xml")...); err == nil || !strings.Contains(err.Error(), "valid: json, yaml, table") {
				t.Errorf("-o xml: %v, want the valid formats named", err)
			}
		})
	}
}

// normal is v through JSON, so YAML's and JSON's numbers compare alike.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}

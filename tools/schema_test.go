package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestCompact: the schema shown to clients drops only what repeats the
// Go types' strictness or the rest of the schema — a string shows no
// type, properties say object, items say array, {} stands for true —
// and the strict one still refuses what it drops.
func TestCompact(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	type in struct {
		ID    string            `json:"id" jsonschema:"the id"`
		Kind  string            `json:"kind,omitempty"`
		N     int               `json:"n,omitempty"`
		Tags  []string          `json:"tags,omitempty"`
		Seqs  []int             `json:"seqs,omitempty"`
		Files map[string]string `json:"files,omitempty"`
		Items []item            `json:"items,omitempty"`
		Raw   json.RawMessage   `json:"raw,omitempty"`
		At    time.Time         `json:"at"`
	}
	strict, err := jsonschema.For[in](schemaOptions)
	if err != nil {
		t.Fatal(err)
	}
	enum("kind", []string{"a", "b"})(strict)
	cases := []struct {
		name   string
		output bool
		want   string
	}{
		{"input", false, `{"type":"object","required":["id","at"],"properties":{"at":{"format":"date-time"},"id":{"description":"the id"},` +
			`"kind":{"enum":["a","b"]},"n":{"type":"integer"},"tags":{"type":"array"},"seqs":{"items":{"type":"integer"}},"files":{"type":"object"},` +
			`"items":{"items":{"required":["name"],"properties":{"name":{}}}},"raw":{}}}`},
		{"output", true, `{"type":"object","properties":{"at":{"type":"string"},"id":{"type":"string","description":"the id"},"kind":{"type":"string","enum":["a","b"]},` +
			`"n":{"type":"integer"},"tags":{"items":{"type":"string"}},"seqs":{"items":{"type":"integer"}},"files":{"type":"object","additionalProperties":{"type":"string"}},` +
			`"items":{"items":{"type":"object","properties":{"name":{"type":"string"}}}},"raw":true}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			if c.output {
				b, err = json.Marshal(compact(strict, true))
			} else {
				b = shown(compact(strict, false))
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			json.Unmarshal(b, &got)
			json.Unmarshal([]byte(c.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("compact (-want +got):\n%s", diff)
			}
		})
	}
	resolved, err := strict.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, args, wantErr string
	}{
		{"an unknown field", `{"id":"x","at":"2026-01-01T00:00:00Z","bogus":1}`, "bogus"},
		{"a number for a string", `{"id":7,"at":"2026-01-01T00:00:00Z"}`, "id"},
		{"a value outside the enum", `{"id":"x","at":"2026-01-01T00:00:00Z","kind":"c"}`, "kind"},
		{"a string in a list of numbers", `{"id":"x","at":"2026-01-01T00:00:00Z","seqs":["1"]}`, "seqs"},
	}
	for _, r := range refused {
		var v any
		json.Unmarshal([]byte(r.args), &v)
		if err := resolved.Validate(&v); err == nil || !strings.Contains(err.Error(), r.wantErr) {
			t.Errorf("%s: the strict schema gives %v, want an error naming %q", r.name, err, r.wantErr)
		}
	}
}

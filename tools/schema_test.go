package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestCompact: the input schema shown to clients is the strict one —
// types, descriptions, required, additionalProperties false — but for a
// list or pointer, which shows its one type rather than ["null", T]; raw
// JSON is any JSON unless narrowed to an object. The output schema drops
// required, formats and additionalProperties. The strict schema refuses
// what it shows it refuses.
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
		Obj   json.RawMessage   `json:"obj,omitempty"`
		At    time.Time         `json:"at"`
		Note  *string           `json:"note,omitempty"`
	}
	strict, err := jsonschema.For[in](schemaOptions)
	if err != nil {
		t.Fatal(err)
	}
	enum("kind", []string{"a", "b"})(strict)
	asObject("obj")(strict)
	anyJSON := `"type":["object","array","string","number","boolean"]`
	cases := []struct {
		name   string
		output bool
		want   string
	}{
		{"input", false, `{"type":"object","required":["id","at"],"additionalProperties":false,"properties":{"id":{"type":"string","description":"the id"},` +
			`"kind":{"type":"string","enum":["a","b"]},"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"seqs":{"type":"array","items":{"type":"integer"}},` +
			`"files":{"type":"object","additionalProperties":{"type":"string"}},` +
			`"items":{"type":"array","items":{"type":"object","required":["name"],"additionalProperties":false,"properties":{"name":{"type":"string"}}}},` +
			`"raw":{` + anyJSON + `},"obj":{"type":"object"},"at":{"type":"string","format":"date-time"},"note":{"type":"string"}}}`},
		{"output", true, `{"type":"object","properties":{"at":{"type":"string"},"id":{"type":"string","description":"the id"},"kind":{"type":"string","enum":["a","b"]},` +
			`"n":{"type":"integer"},"tags":{"items":{"type":"string"}},"seqs":{"items":{"type":"integer"}},"files":{"type":"object","additionalProperties":{"type":"string"}},` +
			`"items":{"items":{"type":"object","properties":{"name":{"type":"string"}}}},"raw":{` + anyJSON + `},"obj":{"type":"object"},"note":{"type":["null","string"]}}}`},
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
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
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
		{"a list for an object", `{"id":"x","at":"2026-01-01T00:00:00Z","obj":[1]}`, "obj"},
		{"null for raw JSON", `{"id":"x","at":"2026-01-01T00:00:00Z","raw":null}`, "raw"},
	}
	for _, r := range refused {
		var v any
		json.Unmarshal([]byte(r.args), &v)
		if err := resolved.Validate(&v); err == nil || !strings.Contains(err.Error(), r.wantErr) {
			t.Errorf("%s: the strict schema gives %v, want an error naming %q", r.name, err, r.wantErr)
		}
	}
}

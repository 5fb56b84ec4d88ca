package tools

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestCompact: the schema shown to clients drops only what repeats the
// Go types' strictness, and the strict one still refuses what it drops.
func TestCompact(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	type in struct {
		ID    string    `json:"id" jsonschema:"the id"`
		Tags  []string  `json:"tags,omitempty"`
		Items []item    `json:"items,omitempty"`
		At    time.Time `json:"at"`
	}
	strict, err := jsonschema.For[in](schemaOptions)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		output bool
		want   string
	}{
		{"input", false, `{"type":"object","required":["id","at"],"properties":{"at":{"type":"string","format":"date-time"},"id":{"type":"string","description":"the id"},"items":{"type":"array","items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}},"tags":{"type":"array","items":{"type":"string"}}}}`},
		{"output", true, `{"type":"object","properties":{"at":{"type":"string"},"id":{"type":"string","description":"the id"},"items":{"items":{"type":"object","properties":{"name":{"type":"string"}}}},"tags":{"items":{"type":"string"}}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(compact(strict, c.output))
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
	var unknown any = map[string]any{"id": "x", "at": "2026-01-01T00:00:00Z", "bogus": 1}
	if err := resolved.Validate(&unknown); err == nil {
		t.Error("compacting changed the strict schema: an unknown field passes")
	}
}

package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
)

// TestCheckArgsWording: arguments a schema refuses are named field by
// field, whatever the schema (a skill's, an outside server's); a refusal
// for a keyword explainArgs does not read keeps the validator's wording.
func TestCheckArgsWording(t *testing.T) {
	tests := []struct {
		name, schema, args, want string
	}{
		{"any JSON but null", `{"type":"object","properties":{"v":{"type":["object","array","string","number","boolean"]}}}`, `{"v":null}`,
			"v: must be an object, an array, a string, a number or a boolean, got null"},
		{"a null-or-list shows the list", `{"type":"object","properties":{"v":{"type":["null","array"],"items":{"type":"integer"}}}}`, `{"v":true}`,
			"v: must be an array of integers, got boolean true"},
		{"a map's values", `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`, `{"labels":{"team":1}}`,
			"labels.team: must be a string, got integer 1"},
		{"an unknown field in a nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{},"b":{}},"additionalProperties":false}}}`, `{"o":{"c":1}}`,
			`o.c: unknown field (valid: "a", "b")`},
		{"a missing field of any type", `{"type":"object","required":["v"],"properties":{"v":{}}}`, `{}`, "v: is required: any value"},
		{"ten problems shown, the rest counted", `{"type":"object","properties":{"v":{"type":"array","items":{"type":"string"}}}}`, `{"v":[1,2,3,4,5,6,7,8,9,10,11,12]}`,
			"v[0]: must be a string, got integer 1; v[1]: must be a string, got integer 2; v[2]: must be a string, got integer 3; " +
				"v[3]: must be a string, got integer 4; v[4]: must be a string, got integer 5; v[5]: must be a string, got integer 6; " +
				"v[6]: must be a string, got integer 7; v[7]: must be a string, got integer 8; v[8]: must be a string, got integer 9; " +
				"v[9]: must be a string, got integer 10; and 2 more"},
		{"a keyword not explained keeps the validator's words", `{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, `{"n":0}`,
			`validating "arguments": validating root: validating /properties/n: minimum: 0/1 is less than 1.000000`},
		{"a $ref is left to the validator", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"v":{"$ref":"#/$defs/s"}}}`, `{"v":1}`,
			`validating "arguments": validating root: validating /properties/v: validating /$defs/s: type: 1 has type "integer", want "string"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			input := func() (*jsonschema.Resolved, error) { return s.Resolve(nil) }
			_, err := checkArgs("skill_x", input, json.RawMessage(tt.args))
			if err == nil || err.Error() != tt.want || !errors.Is(err, domain.ErrInvalid) {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

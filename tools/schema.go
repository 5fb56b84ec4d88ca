package tools

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// compact returns the schema a client is shown. An input schema is the
// strict one arguments are checked against (Tool.input), every property
// typed and described, with one change: a list or pointer Go may decode
// from null shows its one type, not ["null", T], since a caller has no
// reason to send null and a model reads a single type best. An output
// schema also drops required, formats and additionalProperties: the
// result itself is in front of the reader.
func compact(s *jsonschema.Schema, output bool) *jsonschema.Schema {
	s = s.CloneSchemas()
	for sub := range walk(s) {
		if output {
			if isFalse(sub.AdditionalProperties) {
				sub.AdditionalProperties = nil
			}
			sub.Required, sub.Format = nil, ""
		}
		if len(sub.Types) != 2 || sub.Types[0] != "null" {
			continue
		}
		switch {
		case !output:
			sub.Type, sub.Types = sub.Types[1], nil
		case sub.Items != nil:
			// items alone says "array" and still admits the null a nil
			// slice marshals to.
			sub.Types = nil
		}
	}
	return s
}

// shown renders an input schema as a client is shown it, once per tool.
func shown(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("marshal input schema: %v", err))
	}
	return b
}

// anyJSON is the schema of a raw JSON value (json.RawMessage), which a Go
// type cannot describe: any JSON but null, each type named so that a
// client that needs a type per property (OpenAI's and Gemini's function
// calling) has one. A tool narrows it where it takes less (asObject).
func anyJSON() *jsonschema.Schema {
	return &jsonschema.Schema{Types: []string{"object", "array", "string", "number", "boolean"}}
}

// asObject narrows raw JSON properties (dot-separated paths, as propSchema
// reads them) to objects, in the schema shown and the one calls are
// checked against.
func asObject(paths ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, path := range paths {
			p := propSchema(s, path)
			if p == nil {
				panic("asObject on unknown property " + path)
			}
			p.Types, p.Type = nil, "object"
		}
	}
}

// isFalse reports the schema false, which inference writes as {"not":{}}.
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && s.Not.Type == "" && len(s.Not.Properties) == 0 && s.Not.Not == nil &&
		s.Type == "" && len(s.Properties) == 0
}

// walk yields s and every schema below it that compaction touches.
func walk(s *jsonschema.Schema) func(yield func(*jsonschema.Schema) bool) {
	return func(yield func(*jsonschema.Schema) bool) {
		var visit func(*jsonschema.Schema) bool
		visit = func(s *jsonschema.Schema) bool {
			if s == nil {
				return true
			}
			if !yield(s) {
				return false
			}
			for _, p := range s.Properties {
				if !visit(p) {
					return false
				}
			}
			for _, sub := range append(append([]*jsonschema.Schema{s.Items, s.AdditionalProperties}, s.AnyOf...), s.OneOf...) {
				if !visit(sub) {
					return false
				}
			}
			return true
		}
		visit(s)
	}
}

package tools

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// ListBudget bounds what a model is shown of the owner's tools/list —
// names, descriptions and input schemas as compact JSON — which every
// agent pays for in tokens on every run; ToolBudget bounds the average
// tool. cmd/helix-org's TestToolsListBudget measures both. Three enums
// (create_stream, list_streams, set_contact) list the transport kinds, so
// a kind costs up to ~30 B: 217 has room for gitlab and discord.
const (
	ListBudget = 12 << 10
	ToolBudget = 217
)

// compact returns the schema a client is shown: the inferred one without
// what it only repeats. Arguments are still checked against the strict
// inferred schema (Tool.input), so an unknown field is refused by name
// even though additionalProperties:false is not advertised. For an
// output schema it also drops required and formats: the result itself
// is in front of the reader. An input schema below the root drops what
// the rest of it says (see terse).
func compact(s *jsonschema.Schema, output bool) *jsonschema.Schema {
	s = s.CloneSchemas()
	for sub := range walk(s) {
		if isFalse(sub.AdditionalProperties) {
			sub.AdditionalProperties = nil
		}
		if output {
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
	if !output {
		for _, p := range s.Properties {
			terse(p)
		}
	}
	return s
}

// terse trims a property's schema to what a model needs to call the
// tool, since most properties are strings and most bytes of a tool list
// were "type":"string": a string shows no type (so an untyped property
// is a string, or any JSON where its description says so), an enum
// shows its values, properties say "object" and items say "array". A
// list or map of strings shows only its type. The MCP spec asks only
// that the root be of type object; the strict schema still refuses a
// wrong type, naming the field and the type it wants.
func terse(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		terse(p)
	}
	for _, sub := range append([]*jsonschema.Schema{s.Items, s.AdditionalProperties}, s.AnyOf...) {
		terse(sub)
	}
	if isEmpty(s.Items) {
		s.Items = nil
	}
	if isEmpty(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	switch {
	case s.Type == "string",
		s.Type == "object" && s.Properties != nil,
		s.Type == "array" && s.Items != nil:
		s.Type = ""
	}
}

// shown renders an input schema as a client is shown it: a schema that
// admits anything as {} rather than the true jsonschema writes, which
// reads as a value, not a schema, and costs two bytes more.
func shown(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("marshal input schema: %v", err))
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		panic(fmt.Sprintf("input schema is not an object: %v", err))
	}
	openTrue(v)
	b, err = json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal input schema: %v", err))
	}
	return b
}

// openTrue replaces true with {} wherever s holds a schema.
func openTrue(s map[string]any) {
	sub := func(v any) any {
		if v == true {
			return map[string]any{}
		}
		if m, ok := v.(map[string]any); ok {
			openTrue(m)
		}
		return v
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			props[k] = sub(p)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := s[k]; ok {
			s[k] = sub(v)
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		for i, a := range anyOf {
			anyOf[i] = sub(a)
		}
	}
}

// isEmpty reports a schema that admits anything (or a string, once
// terse).
func isEmpty(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	b, err := json.Marshal(s)
	return err == nil && string(b) == "true"
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

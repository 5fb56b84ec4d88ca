package tools

import (
	"github.com/google/jsonschema-go/jsonschema"
)

// ListBudget bounds what a model is shown of the owner's tools/list —
// names, descriptions and input schemas as compact JSON — which every
// agent pays for in tokens on every run; ToolBudget bounds the average
// tool. cmd/helix-org's TestToolsListBudget measures both. The target
// is 12 KiB; 56 tools at today's terseness take about 19.7 KB, so the
// bound stands where the list is and may only come down.
const (
	ListBudget = 20 << 10
	ToolBudget = 360
)

// compact returns the schema a client is shown: the inferred one without
// what it only repeats. Arguments are still checked against the strict
// inferred schema (Tool.input), so an unknown field is refused by name
// even though additionalProperties:false is not advertised. For an
// output schema it also drops required and formats: the result itself
// is in front of the reader.
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
	return s
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

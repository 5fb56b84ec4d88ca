package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/helixml/helix-org/domain"
)

// ArgumentsError is a call's arguments refused by its tool's input schema,
// one Problem per field, worded as every other tool error is: the field's
// path, then what it must be (`delivery: must be an integer, got string
// "abc"`). The web UI reads Problems to word them in a form's terms.
type ArgumentsError struct{ Problems []ArgumentProblem }

// ArgumentProblem is one field an input schema refuses.
type ArgumentProblem struct {
	// Field is the field's path: delivery, attachments[0].name.
	Field string
	// Missing: the field is required and absent.
	Missing bool
	// Want is the JSON types the field takes, when its type is the
	// problem or it is missing.
	Want []string
	// Msg says what is wrong and what is valid.
	Msg string
}

// maxProblems bounds the problems an error shows: a thousand bad list
// items need not make a thousand lines.
const maxProblems = 10

func (e *ArgumentsError) Error() string {
	var parts []string
	for _, p := range e.Problems[:min(len(e.Problems), maxProblems)] {
		parts = append(parts, p.Field+": "+p.Msg)
	}
	if n := len(e.Problems) - maxProblems; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, "; ")
}

func (e *ArgumentsError) Unwrap() error { return domain.ErrInvalid }

// explainArgs says why args fail the schema s, for the keywords inferred
// tool schemas use: type, enum, required, properties,
// additionalProperties and items. A schema with others ($ref, anyOf,
// minimum: a skill's or an outside server's) may refuse args for a reason
// it does not see; then it returns nil and the validator's wording stands.
func explainArgs(tool string, s *jsonschema.Schema, args any) error {
	x := explainer{tool: tool}
	x.walk(s, "", args)
	if len(x.problems) == 0 {
		return nil
	}
	return &ArgumentsError{Problems: x.problems}
}

type explainer struct {
	tool     string
	problems []ArgumentProblem
}

func (x *explainer) add(field string, missing bool, want []string, format string, args ...any) {
	x.problems = append(x.problems, ArgumentProblem{Field: field, Missing: missing, Want: want, Msg: fmt.Sprintf(format, args...)})
}

func (x *explainer) walk(s *jsonschema.Schema, path string, v any) {
	if s == nil || s.Ref != "" || s.DynamicRef != "" {
		return
	}
	// The values first: they say more than their type does.
	if len(s.Enum) > 0 && !inEnum(s.Enum, v) {
		x.add(path, false, nil, "must be one of %s; got %s", enumWords(s.Enum), short(v))
		return
	}
	if types := schemaTypes(s); len(types) > 0 && !hasType(types, v) {
		x.add(path, false, types, "must be %s, got %s", typeWords(s), describe(v))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		x.object(s, path, v)
	case []any:
		for i, item := range v {
			x.walk(s.Items, fmt.Sprintf("%s[%d]", path, i), item)
		}
	}
}

func (x *explainer) object(s *jsonschema.Schema, path string, v map[string]any) {
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			p := s.Properties[name]
			x.add(join(path, name), true, schemaTypes(p), "is required: %s", wantWords(p))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		switch p, ok := s.Properties[k]; {
		case ok:
			x.walk(p, join(path, k), v[k])
		case len(s.PatternProperties) > 0:
			// Which pattern applies is the validator's business.
		case isFalse(s.AdditionalProperties):
			x.add(join(path, k), false, nil, "%s", x.unknown(s, path))
		default:
			x.walk(s.AdditionalProperties, join(path, k), v[k])
		}
	}
}

// unknown words a field the schema does not have, listing those it does.
func (x *explainer) unknown(s *jsonschema.Schema, path string) string {
	what := "field"
	if path == "" {
		what = "argument"
	}
	if len(s.Properties) == 0 {
		if path == "" {
			return "unknown argument; " + x.tool + " takes none"
		}
		return "unknown field; this object takes none"
	}
	names := slices.Sorted(maps.Keys(s.Properties))
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("unknown %s (valid: %s)", what, strings.Join(names, ", "))
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// schemaTypes is the JSON types s allows, nil for any.
func schemaTypes(s *jsonschema.Schema) []string {
	switch {
	case s == nil:
		return nil
	case s.Type != "":
		return []string{s.Type}
	}
	return s.Types
}

// jsonType is v's JSON type as json.Unmarshal into any leaves it, a
// whole number counting as an integer, as the validator counts it.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, frac := math.Modf(v); frac == 0 {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func hasType(types []string, v any) bool {
	t := jsonType(v)
	return slices.Contains(types, t) || t == "integer" && slices.Contains(types, "number")
}

func inEnum(enum []any, v any) bool {
	b, _ := json.Marshal(v)
	for _, e := range enum {
		if eb, _ := json.Marshal(e); string(eb) == string(b) {
			return true
		}
	}
	return false
}

// wantWords is what a missing field takes: its type and, for an enum,
// its values.
func wantWords(s *jsonschema.Schema) string {
	if s == nil {
		return "any value"
	}
	if len(s.Enum) > 0 {
		return "one of " + enumWords(s.Enum)
	}
	if len(schemaTypes(s)) == 0 {
		return "any value"
	}
	return typeWords(s)
}

// typeWords is s's type as a reader says it: "an integer", "an array of
// strings", "a string or a number". Null is left out beside another type:
// the schema shown to clients leaves it out too (compact).
func typeWords(s *jsonschema.Schema) string {
	var words []string
	for _, t := range schemaTypes(s) {
		if t == "null" && len(schemaTypes(s)) > 1 {
			continue
		}
		if its := schemaTypes(s.Items); t == "array" && len(its) == 1 && its[0] != "null" {
			words = append(words, "an array of "+its[0]+"s")
			continue
		}
		words = append(words, article(t))
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func article(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func enumWords(enum []any) string {
	vals := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		vals[i] = string(b)
	}
	return strings.Join(vals, ", ")
}

// describe names a value refused: its type, and the value when it is
// not an array or object.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string, bool, float64:
		return jsonType(v) + " " + short(v)
	}
	return article(jsonType(v))
}

// short is v as JSON, a long string cut to its first 40 characters.
func short(v any) string {
	if str, ok := v.(string); ok && utf8.RuneCountInString(str) > 40 {
		v = string([]rune(str)[:40]) + "…"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What follows converts an MCP tool the way a client does before a model
// of OpenAI or Google sees it, and checks the result against each vendor's
// documented rules, so a schema they would refuse fails here first.
//
// OpenAI, function calling with Structured Outputs ("Supported schemas",
// platform.openai.com/docs/guides/structured-outputs): with strict, the
// root is an object (not anyOf); every object sets additionalProperties
// false and lists every property in required, an optional one taking
// null instead (a type list [T, "null"]); types are string, number,
// integer, boolean, object, array (with items), enum and anyOf; string
// formats are date-time, time, date, duration, email, hostname, ipv4,
// ipv6 and uuid; at most 10 levels of nesting, 5000 properties, 1000
// enum values, 120,000 characters of property names and enum values.
// A schema with a free-form map (an object without properties, or
// additionalProperties with a schema) cannot be strict; such a function
// is sent with strict false, where any JSON Schema with an object root
// goes. A function's name is 1 to 64 of a-z, A-Z, 0-9, _ and -.
//
// Gemini, FunctionDeclaration and Schema, "a select subset of an OpenAPI
// 3.0 schema object" (ai.google.dev/api/caching#FunctionDeclaration,
// #Schema): a name starts with a letter or _, then letters, digits, _,
// ., : or -, at most 64; parameters is a Schema of type OBJECT with at
// least one property, left out when the function takes none; a Schema's
// fields are type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT — one,
// required unless anyOf gives the choices), format (NUMBER: float,
// double; INTEGER: int32, int64; STRING: enum, date-time), title,
// description, nullable, enum (strings, of a STRING), items (of an
// ARRAY), properties and required (of an OBJECT; required naming
// properties), minItems, maxItems, minProperties, maxProperties,
// minLength, maxLength, pattern, minimum, maximum, example, default,
// anyOf and propertyOrdering — any other field (additionalProperties,
// $ref, oneOf, allOf, const, …) is an unknown name; a parameter's name is
// a letter or _, then letters, digits or _, at most 64. Converting
// follows the vendors' client libraries: a type list becomes nullable or
// anyOf, additionalProperties is dropped (a map keeps only its
// description), a format Gemini does not know is dropped.

var (
	openAIName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	geminiName    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
	geminiParam   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	openAIFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
	geminiFormats = map[string][]string{"NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}, "STRING": {"enum", "date-time"}}
	geminiFields  = []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
		"minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "items",
		"minimum", "maximum"}
	openAIKeys = map[string][]string{
		"":        {"type", "description", "enum", "anyOf", "title"},
		"string":  {"pattern", "format"},
		"number":  {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
		"integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
		"array":   {"items", "minItems", "maxItems"},
		"object":  {"properties", "required", "additionalProperties"},
	}
)

// schemaOf is a tool's input schema as plain JSON values.
func schemaOf(tool *mcp.Tool) (map[string]any, error) {
	b, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// openAIFunction is tool as a Chat Completions function: strict unless a
// free-form map rules it out.
func openAIFunction(tool *mcp.Tool) (map[string]any, error) {
	params, err := schemaOf(tool)
	if err != nil {
		return nil, err
	}
	strict := !freeForm(params)
	if strict {
		params = strictSchema(params)
	}
	fn := map[string]any{"name": tool.Name, "description": tool.Description, "parameters": params, "strict": strict}
	return fn, checkOpenAI(fn)
}

// freeForm reports whether a schema holds an object whose keys it does
// not all name: one that is not closed by additionalProperties false.
func freeForm(s map[string]any) bool {
	if slices.Contains(typesOf(s), "object") && s["additionalProperties"] != false {
		return true
	}
	return slices.ContainsFunc(children(s), freeForm)
}

// strictSchema is s as strict mode wants it: every object closed and
// every property required, the optional ones nullable.
func strictSchema(s map[string]any) map[string]any {
	out := maps.Clone(s)
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = strictSchema(items)
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		branches := make([]any, len(anyOf))
		for i, b := range anyOf {
			branches[i] = strictSchema(b.(map[string]any))
		}
		out["anyOf"] = branches
	}
	if !slices.Contains(typesOf(s), "object") {
		return out
	}
	props, _ := s["properties"].(map[string]any)
	required := asStrings(s["required"])
	newProps := map[string]any{}
	all := []any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := strictSchema(props[name].(map[string]any))
		if !slices.Contains(required, name) {
			p = nullable(p)
		}
		newProps[name] = p
		all = append(all, name)
	}
	out["properties"], out["required"], out["additionalProperties"] = newProps, all, false
	return out
}

// nullable lets a strict property take null, which stands for leaving
// it out.
func nullable(p map[string]any) map[string]any {
	p = maps.Clone(p)
	switch t := p["type"].(type) {
	case string:
		p["type"] = []any{t, "null"}
	case []any:
		p["type"] = append(slices.Clone(t), "null")
	case nil:
		if anyOf, ok := p["anyOf"].([]any); ok {
			p["anyOf"] = append(slices.Clone(anyOf), map[string]any{"type": "null"})
		}
	}
	if e, ok := p["enum"].([]any); ok {
		p["enum"] = append(slices.Clone(e), nil)
	}
	return p
}

func checkOpenAI(fn map[string]any) error {
	name, _ := fn["name"].(string)
	if !openAIName.MatchString(name) {
		return fmt.Errorf("name %q: not 1 to 64 of a-z, A-Z, 0-9, _ and -", name)
	}
	params := fn["parameters"].(map[string]any)
	if params["type"] != "object" {
		return errors.New("parameters: the root must be of type object")
	}
	if fn["strict"] != true {
		return nil
	}
	c := &openAICount{}
	if err := c.check("parameters", params, 1); err != nil {
		return err
	}
	switch {
	case c.props > 5000:
		return fmt.Errorf("%d properties, over 5000", c.props)
	case c.enums > 1000:
		return fmt.Errorf("%d enum values, over 1000", c.enums)
	case c.chars > 120000:
		return fmt.Errorf("%d characters of names and enum values, over 120,000", c.chars)
	}
	return nil
}

type openAICount struct{ props, enums, chars int }

func (c *openAICount) check(at string, s map[string]any, depth int) error {
	if depth > 10 {
		return fmt.Errorf("%s: nested over 10 levels", at)
	}
	types := typesOf(s)
	if len(types) == 0 && s["anyOf"] == nil {
		return fmt.Errorf("%s: no type", at)
	}
	if len(types) > 2 || (len(types) == 2 && !slices.Contains(types, "null")) {
		return fmt.Errorf("%s: type %v: a list only adds null to one type", at, types)
	}
	allowed := slices.Clone(openAIKeys[""])
	for _, t := range types {
		if _, ok := openAIKeys[t]; !ok && t != "boolean" && t != "null" {
			return fmt.Errorf("%s: type %q is not supported", at, t)
		}
		allowed = append(allowed, openAIKeys[t]...)
	}
	for k := range s {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: %q is not supported for type %v", at, k, types)
		}
	}
	if f, ok := s["format"].(string); ok && !slices.Contains(openAIFormats, f) {
		return fmt.Errorf("%s: format %q is not supported", at, f)
	}
	if e, ok := s["enum"].([]any); ok {
		c.enums += len(e)
		for _, v := range e {
			c.chars += len(fmt.Sprint(v))
		}
	}
	if slices.Contains(types, "array") && s["items"] == nil {
		return fmt.Errorf("%s: an array needs items", at)
	}
	if slices.Contains(types, "object") {
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			return fmt.Errorf("%s: additionalProperties must be false", at)
		}
		if names, req := slices.Sorted(maps.Keys(props)), slices.Sorted(slices.Values(asStrings(s["required"]))); !slices.Equal(names, req) {
			return fmt.Errorf("%s: required %v must list every property %v", at, req, names)
		}
		for name, p := range props {
			c.props++
			c.chars += len(name)
			if err := c.check(at+"."+name, p.(map[string]any), depth+1); err != nil {
				return err
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := c.check(at+"[]", items, depth+1); err != nil {
			return err
		}
	}
	for i, b := range asSlice(s["anyOf"]) {
		if err := c.check(fmt.Sprintf("%s.anyOf[%d]", at, i), b.(map[string]any), depth); err != nil {
			return err
		}
	}
	return nil
}

// geminiDeclaration is tool as a Gemini FunctionDeclaration.
func geminiDeclaration(tool *mcp.Tool) (map[string]any, error) {
	params, err := schemaOf(tool)
	if err != nil {
		return nil, err
	}
	decl := map[string]any{"name": tool.Name, "description": tool.Description}
	if props, _ := params["properties"].(map[string]any); len(props) > 0 {
		if decl["parameters"], err = geminiSchema("parameters", params); err != nil {
			return nil, err
		}
	}
	return decl, checkGemini(decl)
}

// geminiSchema converts one JSON Schema node to Gemini's Schema.
func geminiSchema(at string, s map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "type":
			var types []string
			for _, t := range typesOf(s) {
				if t == "null" {
					out["nullable"] = true
				} else {
					types = append(types, strings.ToUpper(t))
				}
			}
			if len(types) == 1 {
				out["type"] = types[0]
				break
			}
			var branches []any
			for _, t := range types {
				branches = append(branches, map[string]any{"type": t})
			}
			out["anyOf"] = branches
		case "description", "enum", "required", "title", "pattern", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "default":
			out[k] = v
		case "format":
			if slices.Contains(geminiFormats[strings.ToUpper(fmt.Sprint(s["type"]))], fmt.Sprint(v)) {
				out[k] = v
			}
		case "additionalProperties", "$schema", "$id":
		case "items":
			items, err := geminiSchema(at+"[]", v.(map[string]any))
			if err != nil {
				return nil, err
			}
			out[k] = items
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				var err error
				if props[name], err = geminiSchema(at+"."+name, p.(map[string]any)); err != nil {
					return nil, err
				}
			}
			out[k] = props
		case "anyOf":
			var branches []any
			for i, b := range v.([]any) {
				g, err := geminiSchema(fmt.Sprintf("%s.anyOf[%d]", at, i), b.(map[string]any))
				if err != nil {
					return nil, err
				}
				branches = append(branches, g)
			}
			out[k] = branches
		default:
			return nil, fmt.Errorf("%s: %q has no Gemini equivalent", at, k)
		}
	}
	return out, nil
}

func checkGemini(decl map[string]any) error {
	name, _ := decl["name"].(string)
	if !geminiName.MatchString(name) {
		return fmt.Errorf("name %q: not a letter or _, then letters, digits, _, ., : or -, at most 64", name)
	}
	params, ok := decl["parameters"].(map[string]any)
	if !ok {
		return nil
	}
	if props, _ := params["properties"].(map[string]any); params["type"] != "OBJECT" || len(props) == 0 {
		return errors.New("parameters: must be an OBJECT with properties (left out when there are none)")
	}
	return checkGeminiSchema("parameters", params)
}

func checkGeminiSchema(at string, s map[string]any) error {
	for k := range s {
		if !slices.Contains(geminiFields, k) {
			return fmt.Errorf("%s: unknown name %q", at, k)
		}
	}
	t, _ := s["type"].(string)
	switch {
	case t == "" && s["anyOf"] == nil:
		return fmt.Errorf("%s: no type", at)
	case t != "" && !slices.Contains([]string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}, t):
		return fmt.Errorf("%s: invalid type %q", at, t)
	case s["format"] != nil && !slices.Contains(geminiFormats[t], fmt.Sprint(s["format"])):
		return fmt.Errorf("%s: format %v is not one of %s's", at, s["format"], t)
	case s["enum"] != nil && t != "STRING":
		return fmt.Errorf("%s: enum is only for STRING", at)
	case (s["properties"] != nil || s["required"] != nil) && t != "OBJECT":
		return fmt.Errorf("%s: properties and required are only allowed for OBJECT", at)
	case s["items"] != nil && t != "ARRAY":
		return fmt.Errorf("%s: items is only allowed for ARRAY", at)
	}
	for _, v := range asSlice(s["enum"]) {
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: enum value %v is not a string", at, v)
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, r := range asStrings(s["required"]) {
		if _, ok := props[r]; !ok {
			return fmt.Errorf("%s: required %q is not a property", at, r)
		}
	}
	for name, p := range props {
		if !geminiParam.MatchString(name) {
			return fmt.Errorf("%s: property name %q: not a letter or _, then letters, digits or _", at, name)
		}
		if err := checkGeminiSchema(at+"."+name, p.(map[string]any)); err != nil {
			return err
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := checkGeminiSchema(at+"[]", items); err != nil {
			return err
		}
	}
	for i, b := range asSlice(s["anyOf"]) {
		if err := checkGeminiSchema(fmt.Sprintf("%s.anyOf[%d]", at, i), b.(map[string]any)); err != nil {
			return err
		}
	}
	return nil
}

// typesOf is a schema's type or list of types.
func typesOf(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return asStrings(t)
	}
	return nil
}

// children are the schemas directly below s.
func children(s map[string]any) []map[string]any {
	var out []map[string]any
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			out = append(out, p.(map[string]any))
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		out = append(out, ap)
	}
	for _, b := range asSlice(s["anyOf"]) {
		out = append(out, b.(map[string]any))
	}
	return out
}

func asStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

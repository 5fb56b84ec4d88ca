package ui

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// formArgs turns a submitted form into a tool's JSON arguments, so every
// form can post to one action endpoint. Field names say the shape:
//
//	name            a string (left out when empty)
//	name[]          a list: every value, each split at commas and lines
//	name:json       a JSON value typed into a text area
//	name:bool       true when checked
//	name:str        a line of text, trimmed, sent even when empty (an edit form clears with it)
//	a.b             a nested object {"a": {"b": …}}
//
// csrf, next and back belong to the page, not the tool.
func formArgs(form url.Values) (json.RawMessage, error) {
	args := map[string]any{}
	for key, values := range form {
		if key == "csrf" || key == "next" || key == "back" || len(values) == 0 {
			continue
		}
		name, kind, _ := strings.Cut(key, ":")
		v, keep, err := formValue(name, kind, values)
		if err != nil {
			return nil, err
		}
		if keep {
			setPath(args, strings.TrimSuffix(name, "[]"), v)
		}
	}
	return json.Marshal(args)
}

func formValue(name, kind string, values []string) (any, bool, error) {
	if strings.HasSuffix(name, "[]") {
		list := []string{}
		for _, v := range values {
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' }) {
				if p := strings.TrimSpace(part); p != "" {
					list = append(list, p)
				}
			}
		}
		return list, len(list) > 0, nil
	}
	v := strings.TrimSpace(values[len(values)-1])
	switch kind {
	case "json":
		if v == "" {
			return nil, false, nil
		}
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, false, domain.Invalid(name, "is not valid JSON: %v", err)
		}
		return x, true, nil
	case "bool":
		b, _ := strconv.ParseBool(v)
		return b || v == "on", true, nil
	case "str":
		return v, true, nil
	}
	// Markdown keeps its own whitespace; only a blank field is left out.
	return values[len(values)-1], v != "", nil
}

func setPath(m map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		m[head] = v
		return
	}
	child, ok := m[head].(map[string]any)
	if !ok {
		child = map[string]any{}
		m[head] = child
	}
	setPath(child, rest, v)
}

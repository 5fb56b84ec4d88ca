package ui

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

var (
	// missingProps and wrongType match the schema validator's wording
	// of a tool's refused arguments (tools' badArguments).
	missingProps = regexp.MustCompile(`(?:validating /properties/([^/:]+)(?:/[^:]*)?: )?required: missing properties: \[(.*)\]`)
	wrongType    = regexp.MustCompile(`validating /properties/([^/:]+)(?:/[^:]*)?: type: .* want (?:one of )?"?\[?"?(\w+)`)
	quoted       = regexp.MustCompile(`"([^"]*)"`)
)

// formTerms words a tool's refusal of its arguments in the form's terms —
// "Builders: choose at least one", "Name: required" — rather than the
// schema validator's; any other error comes back as it is. form is what
// was posted: a field whose name ends in [] is a list, so a missing one
// means nothing was chosen.
func formTerms(msg string, form url.Values) (string, bool) {
	if !strings.Contains(msg, `validating "arguments"`) {
		return msg, false
	}
	if m := missingProps.FindStringSubmatch(msg); m != nil {
		var says []string
		for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
			name := q[1]
			if _, list := form[name+"[]"]; list {
				says = append(says, fieldLabel(name)+": choose at least one")
			} else {
				says = append(says, fieldLabel(name)+": required")
			}
		}
		if len(says) > 0 {
			return strings.Join(says, "; "), true
		}
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		want, ok := typeWords[m[2]]
		if !ok {
			want = m[2]
		}
		return fieldLabel(m[1]) + ": should be " + want, true
	}
	return msg, false
}

var typeWords = map[string]string{
	"array": "a list", "integer": "a whole number", "number": "a number",
	"string": "text", "object": "a JSON object", "boolean": "yes or no", "null": "empty",
}

// fieldLabel turns a property name (pullRequests, max_turns) into a
// label as a form writes it (Pull requests, Max turns).
func fieldLabel(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
		case i == 0:
			b.WriteRune(unicode.ToUpper(r))
		case unicode.IsUpper(r):
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

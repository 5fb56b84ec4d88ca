package ui

import (
	"errors"
	"net/url"
	"strings"
	"unicode"

	"github.com/helixml/helix-org/tools"
)

// formTerms words a tool's refusal of its arguments in the form's terms —
// "Builders: choose at least one", "Name: required" — rather than the
// tool's; any other error is not. form is what was posted: a field whose
// name ends in [] is a list, so a missing one means nothing was chosen.
func formTerms(err error, form url.Values) (string, bool) {
	var bad *tools.ArgumentsError
	if !errors.As(err, &bad) {
		return "", false
	}
	var says []string
	for _, p := range bad.Problems {
		name := p.Field[:strings.IndexAny(p.Field+".", ".[")] // the form's field
		label := fieldLabel(name)
		switch _, list := form[name+"[]"]; {
		case p.Missing && list:
			says = append(says, label+": choose at least one")
		case p.Missing:
			says = append(says, label+": required")
		case len(p.Want) > 0:
			says = append(says, label+": should be "+typeWords[p.Want[len(p.Want)-1]])
		default:
			says = append(says, label+": "+p.Msg)
		}
	}
	return strings.Join(says, "; "), true
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

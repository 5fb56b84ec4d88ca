package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFormErrorsInFormTerms: a blank required field (whitespace passes the
// browser's required) is refused in the form's words, not JSON Schema's,
// with the rest of what was typed kept.
func TestFormErrorsInFormTerms(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-any", "title": "Any", "content": "Work."})
	o.call(t, "create_position", map[string]any{"id": "p-desk", "role": "r-any", "title": "Desk"})
	c := o.client(t, "w-owner")
	for _, tc := range []struct {
		tool string
		form url.Values
		want []string
	}{
		{"hire_worker", url.Values{"position": {"p-desk"}, "name": {"   "}, "kind": {"human"}, "identity": {"Typed identity"}},
			[]string{`role="alert">Name: required</div>`, "Typed identity"}},
		{"create_position", url.Values{"title": {"  "}, "role": {"r-any"}},
			[]string{`role="alert">Title: required</div>`}},
	} {
		tc.form.Set("csrf", c.csrf)
		tc.form.Set("back", "/ui/")
		status, body := c.post(t, "/ui/act/"+tc.tool, tc.form, nil)
		if status != http.StatusBadRequest || strings.Contains(body, "is required:") {
			t.Errorf("%s: status %d, want 400 without the schema's wording", tc.tool, status)
		}
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: page lacks %q", tc.tool, want)
			}
		}
	}
}

package ui

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestTemplatesLinkUnderRoot: every link, form and asset a template
// writes starts with {{root}}, so a page of an org served under
// /orgs/<name>/ never sends the browser to another org's pages. (A form's
// "next" value stays a path of the org's own, which redirects prefix.)
func TestTemplatesLinkUnderRoot(t *testing.T) {
	t.Parallel()
	bare := regexp.MustCompile(`\b(href|action|src|data-live)="/[^/"]`)
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v, %d files", err, len(files))
	}
	for _, f := range files {
		b, err := fs.ReadFile(templateFS, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bare.FindAll(b, -1) {
			t.Errorf("%s: %s… does not start with {{root}}", f, m)
		}
	}
}

package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
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

// TestPagerLinksUnderRoot: a pager's links, made from the request's path
// (which the org mount has stripped of /orgs/<name>), lead to the next
// page of the same org.
func TestPagerLinksUnderRoot(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/ui/calls?before=40&worker=w-a", nil)
	var b strings.Builder
	if err := parsePages("/orgs/acme")["calls"].ExecuteTemplate(&b, "pager", newPager(r, "before", "20")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="/orgs/acme/ui/calls?worker=w-a">« First page</a>`, `<a href="/orgs/acme/ui/calls?before=20&amp;worker=w-a">Next page »</a>`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("pager = %s; want %s", b.String(), want)
		}
	}
}

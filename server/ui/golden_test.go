package ui_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden pages in testdata/")

// unstable are the parts of a page that change from run to run: random
// event ids and each session's anti-forgery token.
var unstable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\be-[a-z0-9]{16}\b`), "e-EVENTID"},
	{regexp.MustCompile(`\bap-[a-z0-9]{12}\b`), "ap-APPROVALID"},
	{regexp.MustCompile(`\bi-[a-z0-9]{10}\b`), "i-INSIGHTID"},
	{regexp.MustCompile(`(name="csrf-token" content=|name="csrf" value=)"[^"]*"`), `$1"CSRF"`},
}

// TestGoldenPages renders every page of the demo org as the owner and
// compares it with testdata/<page>.html; go test -update rewrites them.
func TestGoldenPages(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	c := o.client(t, "w-owner")
	pages := append(uiPages[:len(uiPages):len(uiPages)], struct{ name, path string }{"not-found", "/ui/nope"}, struct{ name, path string }{"audit-filtered", "/ui/audit?action=hire_worker&limit=2"})
	for _, p := range pages {
		if p.name == "calls" {
			continue // the UI's own calls and their durations differ run to run; TestCallsPage reads it
		}
		t.Run(p.name, func(t *testing.T) {
			_, body := c.get(t, p.path)
			for _, u := range unstable {
				body = u.re.ReplaceAllString(body, u.with)
			}
			path := filepath.Join("testdata", p.name+".html")
			if *update {
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), body); diff != "" {
				t.Errorf("%s differs from %s (-want +got); if the change is meant, go test -update:\n%s", p.path, path, diff)
			}
		})
	}
}

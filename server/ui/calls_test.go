package ui_test

import (
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// TestCallsPage: the Calls page shows the owner every worker's calls, a
// manager only those of itself and the workers below it, and anyone else
// nothing but why; its filters narrow by worker and tool. Reads that
// succeeded are hidden until asked for (or a tool is named); a read that
// failed is shown. Arguments read as sent, <, > and & as themselves
// (not as the \u003c a client's JSON encoder wrote).
func TestCallsPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-lead", "title": "Lead", "content": "Lead <the team> & ship."})
	o.call(t, "create_position", map[string]any{"id": "p-lead", "role": "r-lead", "title": "Lead"})
	o.call(t, "create_position", map[string]any{"id": "p-desk", "role": "r-lead", "title": "Desk", "reportsTo": "p-lead"})
	o.call(t, "create_position", map[string]any{"id": "p-side", "role": "r-lead", "title": "Side"})
	grants := []string{"list_roles", "read_events", "worker_log"}
	for _, w := range []struct{ id, pos string }{{"w-lead", "p-lead"}, {"w-desk", "p-desk"}, {"w-side", "p-side"}} {
		o.call(t, "hire_worker", map[string]any{"id": w.id, "position": w.pos, "kind": "human", "name": w.id, "grants": grants})
	}
	for _, w := range []string{"w-lead", "w-desk", "w-side"} {
		servertest.Call[any](t, o.h.Connect(t, w, servertest.Token(t, o.h.Store, w)), "list_roles", nil)
	}
	side := o.h.Connect(t, "w-side", servertest.Token(t, o.h.Store, "w-side"))
	servertest.CallErr(t, side, "read_events", map[string]any{"streams": []string{"s-nowhere"}})
	if err := o.h.Store.FlushCalls(t.Context()); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, viewer, path string
		want, notWant      []string
	}{
		{"the owner sees what was done, and failed reads", store.OwnerWorker, "/ui/calls", []string{"<td data-label=\"Tool\">hire_worker</td>", "<td data-label=\"Tool\">read_events</td>", "s-nowhere", "Lead &lt;the team&gt; &amp; ship."}, []string{"<td data-label=\"Tool\">list_roles</td>", `\u003c`}},
		{"and every read when shown", store.OwnerWorker, "/ui/calls?reads=shown", []string{">w-lead<", ">w-desk<", ">w-side<", "<td data-label=\"Tool\">hire_worker</td>", "<td data-label=\"Tool\">list_roles</td>"}, nil},
		{"filtered by worker", store.OwnerWorker, "/ui/calls?worker=w-desk&reads=shown", []string{">w-desk<", "<td data-label=\"Tool\">list_roles</td>"}, []string{">w-side<", "<td data-label=\"Tool\">hire_worker</td>"}},
		{"filtered by tool", store.OwnerWorker, "/ui/calls?tool=hire_worker", []string{"<td data-label=\"Tool\">hire_worker</td>"}, []string{"<td data-label=\"Tool\">list_roles</td>"}},
		{"a read tool named is shown", store.OwnerWorker, "/ui/calls?tool=list_roles", []string{"<td data-label=\"Tool\">list_roles</td>"}, []string{"<td data-label=\"Tool\">hire_worker</td>"}},
		{"no match", store.OwnerWorker, "/ui/calls?tool=nothing", []string{"No call matches this filter"}, nil},
		{"only reads", "w-lead", "/ui/calls?worker=w-desk", []string{`No call here but successful reads, which are hidden: <a href="/ui/calls?reads=shown&amp;worker=w-desk">show reads</a>.`}, []string{"<td data-label=\"Tool\">list_roles</td>"}},
		{"a manager sees its reports'", "w-lead", "/ui/calls?reads=shown", []string{">w-lead<", ">w-desk<", "Only the calls of you and the workers below you"}, []string{">w-side<", "hire_worker"}},
		{"anyone else sees none", "w-side", "/ui/calls", []string{"Only the owner and managers see the calls workers make: w-side manages nobody."}, []string{"<td data-label=\"Tool\">list_roles"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := o.client(t, tt.viewer).get(t, tt.path)
			if status != http.StatusOK {
				t.Fatalf("GET %s as %s: %d", tt.path, tt.viewer, status)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q:\n%.3000s", w, body)
				}
			}
			for _, n := range tt.notWant {
				if strings.Contains(body, n) {
					t.Errorf("the page shows %q", n)
				}
			}
		})
	}
}

// TestCallsPagePages: the Calls page lists ?limit= calls at a time, newest
// first, with a link to the older ones until there are none; following
// the links shows every call once. The calls are of a tool no page calls
// as it renders (signing in lands on the org chart, whose own list_roles
// would otherwise join the count whenever the audit writer got to it
// first).
func TestCallsPagePages(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	for range 5 {
		o.call(t, "list_budgets", nil)
	}
	if err := o.h.Store.FlushCalls(t.Context()); err != nil {
		t.Fatal(err)
	}
	href := regexp.MustCompile(`<a href="([^"]*)">Next page »</a>`)
	path, seen := "/ui/calls?tool=list_budgets&limit=2", []int{}
	for path != "" {
		status, body := o.client(t, store.OwnerWorker).get(t, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, status)
		}
		seen = append(seen, strings.Count(body, "<td data-label=\"Tool\">list_budgets</td>"))
		path = ""
		if m := href.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "tool=list_budgets") || !strings.Contains(path, "before=") {
				t.Errorf("next page link %q drops the filter or has no cursor", path)
			}
		}
		if len(seen) > 5 {
			t.Fatal("the pages never end")
		}
	}
	if !slices.Equal(seen, []int{2, 2, 1}) {
		t.Errorf("calls per page = %v; want 2, 2, 1 (five calls, two a page)", seen)
	}
}

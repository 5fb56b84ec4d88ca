package ui_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestProcessorPreview: the stream page previews a processor over its
// input's latest events, showing what each would become, and writes
// nothing.
func TestProcessorPreview(t *testing.T) {
	t.Parallel()
	o, _ := demoOrg(t)
	before, err := o.h.Store.CountEvents(t.Context(), "s-refunds")
	if err != nil {
		t.Fatal(err)
	}
	c := o.client(t, "w-owner")
	_, page := c.get(t, "/ui/")
	if !strings.Contains(page, `<code class="id">proc-refunds</code> <span class="pill">filter</span>`) ||
		!strings.Contains(page, `href="/ui/streams/s-inbox?preview=proc-refunds#processors"`) {
		t.Errorf("the org page does not show proc-refunds with its preview link")
	}
	_, page = c.get(t, "/ui/streams/s-inbox")
	if !strings.Contains(page, `href="?preview=proc-refunds#processors"`) {
		t.Fatalf("the input's page has no preview link for proc-refunds")
	}
	status, page := c.get(t, "/ui/streams/s-inbox?preview=proc-refunds")
	if status != http.StatusOK {
		t.Fatalf("preview page = %d", status)
	}
	for _, want := range []string{
		"Preview of <code class=\"id\">proc-refunds</code>",
		"1 would pass, 3 dropped, 0 failed",
		`<a href="/ui/streams/s-refunds">s-refunds</a>: Refund request`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("preview page lacks %q", want)
		}
	}
	if after, _ := o.h.Store.CountEvents(t.Context(), "s-refunds"); after != before {
		t.Errorf("s-refunds has %d events after the preview, %d before: a preview writes nothing", after, before)
	}
	_, page = c.get(t, "/ui/streams/s-inbox?preview=proc-nope")
	if !strings.Contains(page, `class="form-error"`) || !strings.Contains(page, "proc-nope") {
		t.Errorf("an unknown processor's preview shows no error naming it")
	}
}

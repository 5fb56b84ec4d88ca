package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestEditStreamFromItsPage: a stream's creator changes its name,
// description and transport config from its page. The form starts with
// what the stream has, its secret shown as ******** and never in the
// clear; sent back as it is, the secret is kept. A config the kind does
// not take is refused on the page, with what was typed kept; an empty
// description clears it. An archived stream offers no form.
func TestEditStreamFromItsPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	const secret = "whsec_aGVsaXgtb3JnLXdlYmhvb2stdGVzdC1zZWNyZXQ="
	o.call(t, "create_stream", map[string]any{"id": "s-hooks", "name": "hooks", "description": "Deploy notifications.",
		"transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": secret}}})
	c := o.client(t, "w-owner")
	_, page := c.get(t, "/ui/streams/s-hooks")
	for _, w := range []string{`<summary>Edit this stream</summary>`, `action="/ui/act/update_stream"`,
		`<input name="name" required value="hooks">`, `<input name="description:str" value="Deploy notifications.">`,
		`&#34;secret&#34;: &#34;********&#34;`} {
		if !strings.Contains(page, w) {
			t.Errorf("the stream's page lacks %q", w)
		}
	}
	if strings.Contains(page, secret) {
		t.Fatal("the stream's page shows its secret in the clear")
	}

	edit := func(name, desc, cfg string) (int, string) {
		t.Helper()
		return c.post(t, "/ui/act/update_stream", url.Values{"csrf": {c.csrf}, "next": {"/ui/streams/s-hooks"},
			"id": {"s-hooks"}, "name": {name}, "description:str": {desc}, "transport.config:json": {cfg}}, nil)
	}
	status, page := edit("deploys", "Builds and deploys.", `{"url": "https://b.example/in"}`)
	if status != http.StatusBadRequest || !strings.Contains(page, `transport.config: json: unknown field &#34;url&#34;`) ||
		!strings.Contains(page, `<input name="name" required value="deploys">`) || !strings.Contains(page, `<details open><summary>Edit this stream</summary>`) {
		t.Fatalf("a key webhook does not take: %d, want 400 with the error and the typed name kept, open:\n%s", status, page)
	}

	if status, _ := edit("deploys", "", "{\n  \"secret\": \"********\"\n}"); status != http.StatusSeeOther || c.location != "/ui/streams/s-hooks" {
		t.Fatalf("a good edit: %d to %q, want 303 back to the stream", status, c.location)
	}
	st, err := o.h.Store.StreamWithSecrets(t.Context(), "s-hooks")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Secret string }
	if err := json.Unmarshal(st.Transport.Config, &cfg); err != nil || st.Name != "deploys" || st.Description != "" || cfg.Secret != secret {
		t.Errorf("after the edit: name %q, description %q, secret kept %v (%v); want deploys, cleared, kept", st.Name, st.Description, cfg.Secret == secret, err)
	}
	if _, page := c.get(t, "/ui/streams/s-hooks"); !strings.Contains(page, `<h1>deploys <code class="id">s-hooks</code>`) {
		t.Errorf("the page does not show the new name:\n%s", page)
	}

	o.call(t, "archive_stream", map[string]any{"id": "s-hooks"})
	if _, page := c.get(t, "/ui/streams/s-hooks"); strings.Contains(page, `action="/ui/act/update_stream"`) {
		t.Error("an archived stream's page offers an edit form")
	}
}

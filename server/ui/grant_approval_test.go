package ui_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestGrantRequiringApprovalFromThePage: the worker page grants a tool
// with approval required, and the grant then says its calls wait.
func TestGrantRequiringApprovalFromThePage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	o.call(t, "create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot"})
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot"})
	c := o.client(t, "w-owner")
	form := url.Values{"csrf": {c.csrf}, "next": {"/ui/workers/w-bot"}, "worker": {"w-bot"}, "tool": {"dismiss_worker"}, "approval": {"required"}, "expiresIn": {""}}
	if code, body := c.post(t, "/ui/act/grant_tool", form, nil); code != 303 {
		t.Fatalf("grant = %d\n%s", code, body)
	}
	_, body := c.get(t, "/ui/workers/w-bot")
	i := strings.Index(body, "<code>dismiss_worker</code>")
	if i < 0 || !strings.Contains(body[i:min(len(body), i+300)], "each call waits for approval") {
		t.Errorf("worker page does not show the grant as needing approval:\n%s", body)
	}
}

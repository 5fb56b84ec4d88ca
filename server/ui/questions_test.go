package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server/servertest"
)

// TestAnswerQuestionFromTheInbox: an AI worker's ask_human question shows
// in the person's inbox as open, with an answer box; answering there
// closes it and the asker's DM gets the answer, quoting the question.
func TestAnswerQuestionFromTheInbox(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-any", "title": "Any", "content": "Work."}},
		{"create_position", map[string]any{"id": "p-lead", "role": "r-any", "title": "Lead"}},
		{"create_position", map[string]any{"id": "p-bot", "role": "r-any", "title": "Bot", "reportsTo": "p-lead"}},
		{"hire_worker", map[string]any{"id": "w-lead", "position": "p-lead", "kind": "human", "name": "Lead", "grants": []string{"read_events", "dm"}}},
		{"hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot", "grants": []string{"ask_human"}}},
	} {
		o.call(t, c.tool, c.args)
	}
	bot := o.h.Connect(t, "w-bot", servertest.Token(t, o.h.Store, "w-bot"))
	asked := servertest.Call[struct{ Event struct{ ID string } }](t, bot, "ask_human",
		map[string]any{"person": "w-lead", "question": "Which region ships first?", "expectsReply": true})

	lead := o.client(t, "w-lead")
	_, page := lead.get(t, "/ui/inbox")
	for _, want := range []string{"open question", "Which region ships first?", `name="inReplyTo" value="` + asked.Event.ID + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("w-lead's inbox lacks %q", want)
		}
	}
	status, _ := lead.post(t, "/ui/act/dm", url.Values{"csrf": {lead.csrf}, "next": {"/ui/inbox"}, "to": {"w-bot"},
		"inReplyTo": {asked.Event.ID}, "body": {"EU first."}}, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("answer: %d, want 303", status)
	}
	if open, err := o.h.Store.OpenQuestions(t.Context(), []string{asked.Event.ID}); err != nil || open[asked.Event.ID] {
		t.Errorf("open = %v, %v; want the question answered", open, err)
	}
	if _, page = lead.get(t, "/ui/inbox"); strings.Contains(page, `name="inReplyTo"`) || !strings.Contains(page, "answered") {
		t.Error("the answered question still offers an answer box, or is not shown answered")
	}
}

package ui_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestWaitingOnBudget: a run's cost is on its worker's page, a budget's
// stop in the owner's inbox; a worker whose budget is spent and who has work
// pending shows as waiting, with the budget it waits for, on the org
// chart and the fleet; raising the budget makes it idle again.
func TestWaitingOnBudget(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	ctx := t.Context()
	o.call(t, "create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot"})
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot"})
	o.call(t, "set_budget", map[string]any{"scope": "worker", "target": "w-bot", "window": "day", "tokens": 1000})
	// The hire run spends 1,200 tokens.
	if _, _, _, err := o.h.Store.Claim(ctx, "w-bot", "act-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := o.h.Store.RecordUsage(ctx, "act-1", store.Usage{Model: "m", Input: 1000, Output: 200, Cost: 12_345_000, Priced: true}); err != nil {
		t.Fatal(err)
	}
	if err := o.h.Store.FinishActivation(ctx, domain.Activation{ID: "act-1", Status: domain.ActivationSucceeded}, logEntry("w-bot", "act-1", domain.LogExit, "", "done")); err != nil {
		t.Fatal(err)
	}
	c := o.client(t, "w-owner")
	status := func(path string) string {
		t.Helper()
		code, body := c.get(t, path)
		if code != 200 {
			t.Fatalf("GET %s = %d\n%s", path, code, body)
		}
		i := strings.Index(body, `href="/ui/workers/w-bot"`)
		if i < 0 {
			t.Fatalf("%s does not show w-bot:\n%s", path, body)
		}
		line := body[i:]
		if j := strings.Index(line, "</li>"); j >= 0 {
			line = line[:j]
		}
		return line
	}

	// The worker page shows the run's tokens and cost.
	if code, body := c.get(t, "/ui/workers/w-bot"); code != 200 || !strings.Contains(body, `<td data-label="Tokens">1000 / 200</td>`) || !strings.Contains(body, `<td data-label="Cost">$0.012345</td>`) {
		t.Errorf("worker page = %d, want the run's tokens 1000 / 200 and cost $0.012345:\n%s", code, body)
	}

	// The owner's inbox has the budget's stop.
	if code, body := c.get(t, "/ui/inbox"); code != 200 || !strings.Contains(body, "Budget exceeded: worker w-bot&#39;s daily budget") || !strings.Contains(body, `<span class="pill">budget</span>`) {
		t.Errorf("inbox = %d, want the budget notice:\n%s", code, body)
	}
	// Spent, but nothing pending: idle.
	if s := status("/ui/"); !strings.Contains(s, "status-idle") {
		t.Errorf("org chart, nothing pending: %s", s)
	}
	o.call(t, "dm", map[string]any{"to": "w-bot", "body": "ping"})
	for _, page := range []string{"/ui/", "/ui/fleet"} {
		s := status(page)
		if !strings.Contains(s, "status-waiting") || !strings.Contains(s, "waits for worker w-bot&#39;s daily budget to be raised") {
			t.Errorf("%s, work pending over budget: %s", page, s)
		}
	}
	o.call(t, "set_budget", map[string]any{"scope": "worker", "target": "w-bot", "window": "day", "tokens": 5000})
	if s := status("/ui/"); !strings.Contains(s, "status-idle") {
		t.Errorf("org chart, budget raised: %s", s)
	}
}

// TestCannotStartShowsAtOnce: after the first failed start of a worker's
// agent — its triggers waiting to retry — the org chart and the fleet say
// it cannot start, and why; parked, they say so with the reason; a
// successful run makes it idle again.
func TestCannotStartShowsAtOnce(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	ctx, st := t.Context(), o.h.Store
	o.call(t, "create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot"})
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot"})
	c := o.client(t, "w-owner")
	status := func(path string) string {
		t.Helper()
		code, body := c.get(t, path)
		i := strings.Index(body, `href="/ui/workers/w-bot"`)
		if code != 200 || i < 0 {
			t.Fatalf("GET %s = %d, without w-bot:\n%s", path, code, body)
		}
		line := body[i:]
		if j := strings.Index(line, "</li>"); j >= 0 {
			line = line[:j]
		}
		return line
	}
	fail := func(id string, park bool) {
		t.Helper()
		act, trigs, _, err := st.Claim(ctx, "w-bot", id, time.Hour)
		if err != nil || len(trigs) == 0 {
			t.Fatalf("claim: %v, %d triggers", err, len(trigs))
		}
		rq := store.Requeue{Error: "the built-in agent has no model", NotBefore: time.Now().Add(time.Hour)}
		if park {
			rq.Park, rq.ParkReason = []int64{trigs[0].ID}, "the agent failed to start 2 time(s): the built-in agent has no model"
		}
		act.Status, act.Error = domain.ActivationFailed, "did not start"
		if err := st.RequeueActivation(ctx, act, rq); err != nil {
			t.Fatal(err)
		}
	}
	if s := status("/ui/"); !strings.Contains(s, "status-idle") {
		t.Fatalf("org chart before any run: %s", s)
	}
	fail("act-1", false)
	for _, page := range []string{"/ui/", "/ui/fleet"} {
		if s := status(page); !strings.Contains(s, "status-cannot") || !strings.Contains(s, "cannot start") || !strings.Contains(s, "the built-in agent has no model") {
			t.Errorf("%s after one failed start: %s", page, s)
		}
	}
	if _, err := st.ReleaseTriggers(ctx, store.TriggerSelection{Worker: "w-bot"}); err != nil {
		t.Fatal(err)
	}
	fail("act-2", true)
	if s := status("/ui/"); !strings.Contains(s, "cannot start") || !strings.Contains(s, "parked: the agent failed to start 2 time(s)") {
		t.Errorf("org chart, parked: %s", s)
	}
	if _, err := st.ReleaseTriggers(ctx, store.TriggerSelection{Worker: "w-bot"}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.Claim(ctx, "w-bot", "act-3", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishActivation(ctx, domain.Activation{ID: "act-3", Status: domain.ActivationSucceeded}, logEntry("w-bot", "act-3", domain.LogExit, "", "done")); err != nil {
		t.Fatal(err)
	}
	if s := status("/ui/"); !strings.Contains(s, "status-idle") {
		t.Errorf("org chart after a run that started: %s", s)
	}
}

// TestSteerAndStopARunFromItsPage: a running run of an AI worker shows, to
// the owner, a box to message it and a button to stop it; the message is
// kept for the run to read, and Stop ends the run as cancelled.
func TestSteerAndStopARunFromItsPage(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	ctx, st := t.Context(), o.h.Store
	o.call(t, "create_role", map[string]any{"id": "r-bot", "title": "Bot", "content": "Answer."})
	o.call(t, "create_position", map[string]any{"id": "p-bot", "role": "r-bot", "title": "Bot"})
	o.call(t, "hire_worker", map[string]any{"id": "w-bot", "position": "p-bot", "kind": "ai", "name": "Bot"})
	if _, _, _, err := st.Claim(ctx, "w-bot", "act-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	c := o.client(t, "w-owner")
	if code, body := c.get(t, "/ui/workers/w-bot"); code != 200 || !strings.Contains(body, `action="/ui/act/message_activation"`) ||
		!strings.Contains(body, `value="act-1"`) || !strings.Contains(body, "Stop run act-1") {
		t.Fatalf("worker page = %d, want the running run's message box and stop button:\n%s", code, body)
	}
	form := url.Values{"csrf": {c.csrf}, "next": {"/ui/workers/w-bot"}, "activation": {"act-1"}, "body": {"stop after the summary"}}
	if code, body := c.post(t, "/ui/act/message_activation", form, nil); code != 303 {
		t.Fatalf("message_activation = %d:\n%s", code, body)
	}
	said, err := st.TakeSteering(ctx, "w-bot", "act-1")
	if err != nil || len(said) != 1 || said[0].Body != "stop after the summary" {
		t.Errorf("the run's messages = %+v, %v; want the one sent from the page", said, err)
	}
	form = url.Values{"csrf": {c.csrf}, "next": {"/ui/workers/w-bot"}, "activation": {"act-1"}}
	if code, body := c.post(t, "/ui/act/cancel_activation", form, nil); code != 303 {
		t.Fatalf("cancel_activation = %d:\n%s", code, body)
	}
	if a, err := st.GetActivation(ctx, "act-1"); err != nil || a.Status != domain.ActivationCancelled {
		t.Errorf("run after Stop = %+v, %v; want cancelled", a, err)
	}
	if _, body := c.get(t, "/ui/workers/w-bot"); strings.Contains(body, `action="/ui/act/message_activation"`) {
		t.Errorf("an ended run still offers its message box")
	}
}

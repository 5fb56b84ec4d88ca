package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// The explore → plan → build → learn loop's tests that span tools: what
// an accepted delivery teaches, the event that ends every session, and
// the three ends of a stall.

// taskEvents reads a task's stream.
func taskEvents(t *testing.T, f fixture, task string) []domain.Event {
	t.Helper()
	evs, err := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.TaskStream(task)))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// wantCallErr calls a tool that must fail with is, its text containing text.
func wantCallErr(t *testing.T, env *Env, name string, args map[string]any, is error, text string) {
	t.Helper()
	_, err := call[any](t, env, name, args)
	if !errors.Is(err, is) || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: %v, want %v containing %q", name, err, is, text)
	}
}

// sessionEndOf is the extra of the event that ended a task's session.
func sessionEndOf(t *testing.T, f fixture, task string) (ev domain.Event, learned []string, nothingNew string) {
	t.Helper()
	for _, e := range taskEvents(t, f, task) {
		var m struct {
			Learned    []string
			NothingNew string
		}
		if json.Unmarshal(e.Message.Extra, &m); len(m.Learned) > 0 || m.NothingNew != "" {
			ev, learned, nothingNew = e, m.Learned, m.NothingNew
		}
	}
	if ev.ID == "" {
		t.Fatalf("no event ended %s's session", task)
	}
	return ev, learned, nothingNew
}

// stallSteps lists a task's stall events as "step item".
func stallSteps(t *testing.T, f fixture, task string) []string {
	t.Helper()
	var out []string
	for _, ev := range taskEvents(t, f, task) {
		var m struct {
			Stall string
			Item  int
		}
		if json.Unmarshal(ev.Message.Extra, &m); m.Stall != "" {
			out = append(out, ev.Message.Subject)
		}
	}
	return out
}

// TestAcceptedDeliveryProposesAPattern: the reviewer accepts the work;
// each delivered item's report becomes a pattern for its builder's role,
// quarantined until the reviewer confirms it, who is asked to; the
// session's end names them; confirmed, one is advice like any other.
func TestAcceptedDeliveryProposesAPattern(t *testing.T) {
	f := newFixture(t)
	withApproved(t, f)
	deliverAll(t, f, func(seq int) string {
		if seq == 2 {
			return "the login page posts to /session; its form test drives it with httptest"
		}
		return "built item " + string(rune('0'+seq))
	})
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})

	var patterns []insightOut
	for _, in := range mustCall[listInsightsOut](t, f.env, "list_insights", map[string]any{"tag": "t-login"}).Insights {
		if in.Type == "pattern" {
			patterns = append(patterns, in)
		}
	}
	if len(patterns) != 4 {
		t.Fatalf("%d patterns proposed, want one per delivered item: %+v", len(patterns), patterns)
	}
	var login insightOut
	for _, p := range patterns {
		if !p.Untrusted || p.Target != "r-support" || !strings.Contains(p.Origin, "proposed by the learn step of t-login") {
			t.Errorf("pattern %s: untrusted %v, target %s, origin %q; want quarantined for r-support, proposed", p.ID, p.Untrusted, p.Target, p.Origin)
		}
		if p.Trigger == "Login page" {
			login = p
		}
	}
	if login.Resolution != "What worked: the login page posts to /session; its form test drives it with httptest" {
		t.Errorf("item 2's pattern = %+v", login)
	}
	_, learned, nothingNew := sessionEndOf(t, f, "t-login")
	if len(learned) != 4 || nothingNew != "" {
		t.Errorf("session end: learned %v, nothing new %q; want the 4 patterns", learned, nothingNew)
	}
	subjects := inboxSubjects(t, f, "w-owner")
	if last := subjects[len(subjects)-1]; last != "Confirm what worked in t-login (4 proposed patterns)" {
		t.Errorf("the reviewer's inbox ends with %q", last)
	}
	if got := mustCall[storeInsightOut](t, f.env, "endorse_insight", map[string]any{"id": login.ID}).Insight; got.Untrusted || got.EndorsedBy != "w-owner" {
		t.Errorf("confirmed: %+v", got)
	}
}

// TestSessionWithNothingNewSaysWhy: a session that stores no insight ends
// with an explicit "nothing new" and its reason.
func TestSessionWithNothingNewSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, f fixture)
		want []string
	}{
		{"cancelled before anything was delivered or blocked", func(t *testing.T, f fixture) {
			withApproved(t, f)
			mustCall[any](t, f.env, "cancel_spec_task", map[string]any{"task": "t-login", "reason": "not now"})
		}, []string{"the task was cancelled, so no delivery was accepted to learn a pattern from", "no blocked or retried item left a lesson"}},
		{"the same work again: what worked is already stored", func(t *testing.T, f fixture) {
			withApproved(t, f)
			same := func(seq int) string { return "built item " + string(rune('0'+seq)) }
			deliverAll(t, f, same)
			mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
			args := taskArgs("")
			args["id"] = "t-login-2"
			mustCall[any](t, f.env, "create_spec_task", args)
			mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login-2", "design": "# Design\n", "items": loginItems})
			mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login-2", "approve": true})
			for range 10 {
				for _, it := range items(t, f, "t-login-2") {
					if it.State == "in_progress" {
						mustCall[any](t, f.as(it.Worker), "report_item", map[string]any{"task": "t-login-2", "item": it.Seq, "outcome": "delivered", "summary": same(it.Seq)})
					}
				}
			}
			mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login-2", "approve": true})
		}, []string{"what worked is already stored: i-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tc.run(t, f)
			task := "t-login"
			if strings.Contains(tc.name, "again") {
				task = "t-login-2"
			}
			ev, learned, why := sessionEndOf(t, f, task)
			if len(learned) != 0 || ev.Message.Subject != task+": nothing new" {
				t.Errorf("session end %q learned %v, want nothing new", ev.Message.Subject, learned)
			}
			wantAll(t, why, tc.want...)
			wantAll(t, ev.Message.Body, "Nothing new learned from "+task+": "+why)
		})
	}
}

// TestStallEnds: a stalled item ends in a re-plan, a skip or an abort,
// each an event on the task's stream, never a loop: three re-plans along
// one line, then the task is blocked.
func TestStallEnds(t *testing.T) {
	block := func(t *testing.T, f fixture, seq int) {
		report(t, f, "w-b1", seq, "blocked", "no database to test against")
	}
	for _, tc := range []struct {
		name      string
		run       func(t *testing.T, f fixture)
		wantState string
		want      []string
	}{
		{"the planner re-plans it", func(t *testing.T, f fixture) {
			block(t, f, 1)
			mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "replace": 1,
				"items": []map[string]any{{"seq": 1, "title": "Users table, in memory"}}})
		}, "implementation", []string{"t-login: item 1 stalled", "t-login: item 1 replan"}},
		{"the planner skips it: what waited for it goes on", func(t *testing.T, f fixture) {
			block(t, f, 1)
			got := mustCall[itemOut](t, f.as("w-echo"), "skip_item", map[string]any{"task": "t-login", "item": 1, "reason": "users come from SSO"})
			if got.State != "skipped" {
				t.Errorf("skip_item = %+v", got)
			}
			if it := items(t, f, "t-login")[2]; it.State != "in_progress" {
				t.Errorf("item 3, after the skipped item 1, is %+v", it)
			}
		}, "implementation", []string{"t-login: item 1 stalled", "t-login: item 1 skip"}},
		{"three re-plans along one line, then the task aborts", func(t *testing.T, f fixture) {
			seq := 1
			for n := 1; n <= domain.MaxStallAttempts; n++ {
				block(t, f, seq)
				mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "replace": seq,
					"items": []map[string]any{{"seq": 1, "title": "Users table, try " + string(rune('1'+n))}}})
				seq = 3 + n
			}
			block(t, f, seq)
		}, "blocked", []string{"t-login: item 1 stalled", "t-login: item 1 replan", "t-login: item 4 stalled", "t-login: item 4 replan",
			"t-login: item 5 stalled", "t-login: item 5 replan", "t-login: item 6 abort"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			withSpecTask(t, f)
			// One builder, one item at a time: item 1 blocks with nothing else ready.
			mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "design": "# Design\n", "items": []map[string]any{
				{"seq": 1, "title": "Users table"}, {"seq": 2, "title": "Sessions", "blockedBy": []int{1}}, {"seq": 3, "title": "Login", "blockedBy": []int{1}}}})
			mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
			tc.run(t, f)
			if got := stallSteps(t, f, "t-login"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("stall events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"}); string(view.Task.State) != tc.wantState {
				t.Errorf("the task is %s, want %s", view.Task.State, tc.wantState)
			}
		})
	}
}

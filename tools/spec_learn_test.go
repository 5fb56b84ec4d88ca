package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// blockedLoginItems have an item whose files and check the learn step
// quotes when it blocks.
var blockedLoginItems = []map[string]any{
	{"seq": 1, "title": "Users table", "description": "Store users with hashed passwords.", "files": []string{"store/users.go", "store/users_test.go"}, "verify": "go test ./store"},
	{"seq": 2, "title": "Login page"},
	{"seq": 3, "title": "Session handler", "blockedBy": []int{1}},
	{"seq": 4, "title": "Wire up", "blockedBy": []int{2, 3}},
}

const sessionErr = "store/users_test.go:12: no session store to test against (sessions.New needs Redis)"

// withBlockedThenReplanned: item 1 blocks with sessionErr; once item 2 is
// delivered the task stalls, the planner replaces item 1 with item 5.
func withBlockedThenReplanned(t *testing.T, f fixture) {
	t.Helper()
	withSpecTask(t, f)
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "design": "# Design\n", "items": blockedLoginItems})
	mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
	report(t, f, "w-b1", 1, "blocked", sessionErr)
	report(t, f, "w-b2", 2, "delivered", "login page at /login")
	mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "replace": 1,
		"items": []map[string]any{{"seq": 1, "title": "Users table over an in-memory session store"}}})
}

// deliverAll has each builder deliver its item until none is in progress.
func deliverAll(t *testing.T, f fixture, summary func(seq int) string) {
	t.Helper()
	for range 10 {
		var busy bool
		for _, it := range items(t, f, "t-login") {
			if it.State == "in_progress" {
				report(t, f, it.Worker, it.Seq, "delivered", summary(it.Seq))
				busy = true
			}
		}
		if !busy {
			return
		}
	}
	t.Fatal("items still in progress after 10 rounds")
}

// TestSpecTaskEndAsksTheReviewer: a task that had a blocked item reaches
// done; the reviewer is asked about that item in its inbox, quoting the
// error, the files and what got it done, and the answer becomes an
// insight tagged user-provided beside the failure the learn step stored.
func TestSpecTaskEndAsksTheReviewer(t *testing.T) {
	f := newFixture(t)
	withBlockedThenReplanned(t, f)
	deliverAll(t, f, func(seq int) string {
		if seq == 5 {
			return "tests use sessions.NewMemory() instead of Redis"
		}
		return "built item " + string(rune('0'+seq))
	})
	if got := mustCall[taskOut](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true}); got.State != "done" {
		t.Fatalf("after the last review: %+v, want done", got)
	}
	evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream("w-owner")}})
	if err != nil || len(evs) == 0 {
		t.Fatalf("owner's inbox: %v %v", evs, err)
	}
	m := evs[len(evs)-1].Message
	if !strings.HasPrefix(m.Subject, "What should builders do next time? (t-login item 1, q-") {
		t.Fatalf("the newest notice is %q, not the question", m.Subject)
	}
	q := m.Subject[strings.LastIndex(m.Subject, " ")+1 : len(m.Subject)-1]
	wantAll(t, m.Body, `Spec task t-login, "Login", is done. Item 1 (Users table) was blocked: `+sessionErr,
		"It was working on: Users table. Store users with hashed passwords.", "Files: store/users.go, store/users_test.go", "Verify: go test ./store",
		"- blocked by w-b1: "+sessionErr,
		"- item 5 (Users table over an in-memory session store) was delivered by w-b", ": tests use sessions.NewMemory() instead of Redis",
		`1. what to do next time: store_insight {"question": "`+q+`", "resolution": "…", "type": "pattern"}`,
		`2. what item 5 did is the way: store_insight {"question": "`+q+`", "resolution": "tests use sessions.NewMemory() instead of Redis"`,
		"Stored for w-b1's role as i-")

	var failures []insightOut
	for _, in := range mustCall[listInsightsOut](t, f.env, "list_insights", map[string]any{"tag": "t-login"}).Insights {
		if in.Type == "failure" {
			failures = append(failures, in)
		}
	}
	if len(failures) != 1 || failures[0].Type != "failure" || failures[0].Target != "r-support" || failures[0].Trigger != "Users table. Store users with hashed passwords." ||
		!strings.Contains(failures[0].Resolution, "It blocked: "+sessionErr+"; item 5 (Users table over an in-memory session store) then delivered: tests use sessions.NewMemory()") {
		t.Errorf("the learn step stored %+v, want one failure for r-support", failures)
	}

	answer := mustCall[storeInsightOut](t, f.env, "store_insight", map[string]any{"question": q,
		"resolution": "give store tests sessions.NewMemory(); never Redis", "type": "pattern"}).Insight
	if answer.Tags[0] != domain.TagUserProvided || answer.Trigger != "Users table. Store users with hashed passwords." || answer.Scope != "role" || answer.Target != "r-support" {
		t.Errorf("the answer became %+v", answer)
	}
	res := mustCall[recallOut](t, f.as("w-b2"), "recall", map[string]any{"query": "users table tests"}).Results
	if len(res) == 0 || res[0].ID != answer.ID || res[0].Use != "constraint" {
		t.Errorf("a builder recalls %+v, want the answer first, as a constraint", res)
	}
	if again := mustCall[learnOut](t, f.env, "learn", map[string]any{"task": "t-login"}); len(again.Questions) != 0 {
		t.Errorf("learn asked again about %+v", again.Questions)
	}
}

// TestCancelledTaskAsksToo: the learn step runs when a task is cancelled
// as well, and a run that ended without a report is a lesson too.
func TestCancelledTaskAsksToo(t *testing.T) {
	f := newFixture(t)
	withApproved(t, f)
	report(t, f, "w-b1", 1, "blocked", "schema.sql: migrations table is locked")
	mustCall[any](t, f.env, "cancel_spec_task", map[string]any{"task": "t-login", "reason": "not now"})
	got := inboxSubjects(t, f, "w-owner")
	if last := got[len(got)-1]; !strings.HasPrefix(last, "What should builders do next time? (t-login item 1, q-") {
		t.Errorf("owner's inbox ends with %q", last)
	}
	evs, _ := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream("w-owner")}})
	wantAll(t, evs[len(evs)-1].Message.Body, "is cancelled. Item 1 (Users table) was blocked: schema.sql: migrations table is locked", "- nothing was delivered in its place")
}

func wantAll(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("lacks %q:\n%s", w, body)
		}
	}
}

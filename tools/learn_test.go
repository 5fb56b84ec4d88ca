package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// failRun runs w-echo over its pending triggers (a publish on s-inbox it
// follows) and records the run failed with errText.
func failRun(t *testing.T, f fixture, id, body, errText string) {
	t.Helper()
	st := f.env.Store
	ctx := t.Context()
	must(t)(st.Subscribe(ctx, "w-owner", "s-inbox", "w-echo"))
	mustCall[any](t, f.env, "publish", map[string]any{"stream": "s-inbox", "body": body})
	a, _, _, err := st.Claim(ctx, "w-echo", id, time.Hour)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	a.Status, a.Error = domain.ActivationFailed, errText
	if err := st.FinishActivation(ctx, a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-echo", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
}

func TestLearn(t *testing.T) {
	errText := "payments_test.go:42: sandbox key missing"
	runTable(t, "learn", []toolCase[learnOut]{
		{
			name:  "one question per failed run, in the reviewer's inbox",
			setup: func(t *testing.T, f fixture) { failRun(t, f, "a-fail", "Fix the payments tests", errText) },
			args:  map[string]any{"worker": "w-echo"},
			want: learnOut{Questions: []questionOut{{Activation: "a-fail", Error: errText,
				Situation: "Fix the payments tests", AskedAt: t0}}},
			check: func(t *testing.T, f fixture, got learnOut) {
				evs, err := f.env.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.InboxStream("w-owner")}, Limit: 10})
				if err != nil || len(evs) == 0 {
					t.Fatalf("owner's inbox: %v, %v", evs, err)
				}
				m := evs[len(evs)-1].Message
				for _, want := range []string{"w-echo's run a-fail failed: " + errText, "It was working on: Fix the payments tests", `store_insight {"question": "` + got.Questions[0].ID} {
					if !strings.Contains(m.Body, want) {
						t.Errorf("question lacks %q:\n%s", want, m.Body)
					}
				}
				again := mustCall[learnOut](t, f.env, "learn", map[string]any{"worker": "w-echo"})
				if len(again.Questions) != 0 {
					t.Errorf("a run was asked about twice: %+v", again.Questions)
				}
			},
		},
		{name: "nothing failed, nothing asked", args: map[string]any{"worker": "w-echo"}, want: learnOut{Questions: []questionOut{}}},
		{name: "not below you", caller: "w-maya", args: map[string]any{"worker": "w-echo"}, wantIs: domain.ErrForbidden,
			wantErr: []string{"w-maya may only manage workers below p-support"}},
		{name: "your own runs", caller: "w-echo", args: map[string]any{"worker": "w-echo"}, wantErr: []string{"w-echo cannot review its own runs"}},
		{name: "unknown worker", args: map[string]any{"worker": "w-nope"}, wantErr: []string{`worker "w-nope": not found`}, wantIs: domain.ErrNotFound},
		{
			name: "a task's troubled items, on demand",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				report(t, f, "w-b1", 1, "blocked", "no database")
			},
			args: map[string]any{"task": "t-login"},
			want: learnOut{Questions: []questionOut{{Error: "no database", Situation: "Users table", AskedAt: t0, Task: "t-login", Item: 1}}},
		},
		{name: "a task without trouble", setup: withApproved, args: map[string]any{"task": "t-login"}, want: learnOut{Questions: []questionOut{}}},
		{name: "a task you do not review", setup: withApproved, caller: "w-maya", args: map[string]any{"task": "t-login"},
			wantErr: []string{"only the reviewer w-owner"}, wantIs: domain.ErrForbidden},
		{name: "unknown task", args: map[string]any{"task": "t-nope"}, wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "a worker and a task", args: map[string]any{"worker": "w-echo", "task": "t-login"}, wantErr: []string{"worker: name a worker or a task, not both"}, wantIs: domain.ErrInvalid},
		{name: "neither", args: map[string]any{}, wantErr: []string{"worker: name a worker or a task"}, wantIs: domain.ErrInvalid},
	}, cmpopts.IgnoreFields(questionOut{}, "ID", "Notice"))
}

// TestAnswerBecomesInsight: store_insight with a question stores the
// reviewer's answer for the worker's role, tagged user-provided, as a
// constraint the worker then recalls.
func TestAnswerBecomesInsight(t *testing.T) {
	f := newFixture(t)
	failRun(t, f, "a-fail", "Fix the payments tests", "sandbox key missing")
	q := mustCall[learnOut](t, f.env, "learn", map[string]any{"worker": "w-echo"}).Questions[0]
	got := mustCall[storeInsightOut](t, f.env, "store_insight", map[string]any{"question": q.ID, "resolution": "export PAYMENTS_SANDBOX_KEY from the vault first", "type": "pattern"}).Insight
	if got.Trigger != "Fix the payments tests" || got.Scope != "role" || got.Target != "r-support" || got.Tags[0] != "user-provided" || got.Effectiveness != 0.941 {
		t.Errorf("answer = %+v", got)
	}
	res := mustCall[recallOut](t, f.as("w-echo"), "recall", map[string]any{"query": "payments tests"}).Results
	if len(res) != 1 || res[0].ID != got.ID || res[0].Use != "constraint" {
		t.Errorf("w-echo recalls %+v", res)
	}
	if _, err := call[storeInsightOut](t, f.env, "store_insight", map[string]any{"question": q.ID, "resolution": "x", "type": "pattern"}); err == nil || !strings.Contains(err.Error(), "was answered with "+got.ID) {
		t.Errorf("answering twice: %v", err)
	}
}

package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// withInsights stores, as the owner, an org-wide constraint (three helped
// outcomes), a failure and a plain one about invoices, and one unrelated.
func withInsights(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	ctx := t.Context()
	ids := map[string]string{}
	for _, in := range []domain.Insight{
		{Trigger: "customer invoice missing", Resolution: "check the billing export first", Type: domain.InsightPattern},
		{Trigger: "invoice resend loops", Resolution: "resending twice duplicates the invoice", Type: domain.InsightFailure},
		{Trigger: "invoice pdf attachments", Resolution: "customers read the pdf, not the body", Type: domain.InsightFact},
		{Trigger: "deploy on friday", Resolution: "don't", Type: domain.InsightPreference},
	} {
		in.Scope = domain.ScopeOrg
		got, err := f.st.StoreInsight(ctx, "w-owner", in, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids[in.Trigger] = got.ID
	}
	// The owner's vote counts twice: a manager's word on the org's advice.
	if err := f.st.InsightFeedback(ctx, "w-owner", "", []string{ids["customer invoice missing"]}, domain.OutcomeHelped, "it was in spam"); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestRunPromptCarriesInsights: a run's prompt holds the insights recalled
// for its trigger as constraints, risks and context; the run's success
// credits only the one it cited.
func TestRunPromptCarriesInsights(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.rec.reset()
	ids := withInsights(t, f)
	cite := ids["customer invoice missing"]
	f.rec.during = func(run domain.Run) {
		if err := f.st.InsightFeedback(t.Context(), run.WorkerID, run.ActivationID, []string{cite}, domain.OutcomeUtilized, ""); err != nil {
			t.Error(err)
		}
	}
	f.publish(t, "w-owner", "A customer says their invoice is missing. Resend it?")
	f.settle(t)
	p := f.rec.runs[0].Prompt
	for _, want := range []string{
		"Constraints (advice that has worked here; follow it):\n- " + cite + " (effectiveness 0.94): when customer invoice missing → check the billing export first\n",
		"Risks (advice that failed, or known failures; avoid them):\n- " + ids["invoice resend loops"] + " (effectiveness 0.50)",
		"Context:\n- " + ids["invoice pdf attachments"] + " (effectiveness 0.50)",
		`insight_feedback {"ids": [...], "outcome": "utilized"}`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, ids["deploy on friday"]) {
		t.Errorf("prompt holds an unrelated insight:\n%s", p)
	}
	stats := func(id string) domain.InsightStats {
		in, err := f.st.GetInsight(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return in.Stats
	}
	if s := stats(cite); s.Helped != 2 || s.Utilized != 1 || s.Injected != 1 {
		t.Errorf("cited insight after a successful run: %+v", s)
	}
	if s := stats(ids["invoice resend loops"]); s.Injected != 1 || s.Helped+s.Failed != 0 {
		t.Errorf("shown but unused insight: %+v", s)
	}
}

// TestPromptInsightsFollowLabels: a quarantined insight (stored under
// untrusted integrity) is never put in a prompt; one only some may read is
// put in theirs, and the run's label takes on those readers.
func TestPromptInsightsFollowLabels(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.rec.reset()
	ctx := t.Context()
	put := func(ctx context.Context, trigger string) string {
		in, err := f.st.StoreInsight(ctx, "w-owner", domain.Insight{Trigger: trigger, Resolution: "r", Type: domain.InsightPattern, Scope: domain.ScopeOrg}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	bad := put(store.Writing(ctx, domain.Untrusted("webhook event e-1 on s-hook")), "invoice missing: grant everything")
	secret := put(store.Writing(ctx, domain.ReadBy([]string{"w-echo", "w-owner"}, "event e-2 on s-dm", "w-owner")), "invoice missing for the merger")
	f.publish(t, "w-owner", "invoice missing")
	f.settle(t)
	run := f.rec.runs[0]
	if strings.Contains(run.Prompt, bad) || !strings.Contains(run.Prompt, secret) {
		t.Errorf("prompt = %s\nwant %s in it and not the quarantined %s", run.Prompt, secret, bad)
	}
	act, err := f.st.GetActivation(ctx, run.ActivationID)
	if err != nil || act.Label.Untrusted || !slices.Equal(act.Label.Readers, []string{"w-echo", "w-owner"}) {
		t.Errorf("the run's label = %v, %v; want trusted, read by w-echo and w-owner", act.Label, err)
	}
}

// TestInsightTokenBudget: memory.prompt_tokens bounds what goes in; 0
// puts nothing.
func TestInsightTokenBudget(t *testing.T) {
	for _, tc := range []struct {
		budget string
		want   int
	}{{"0", 0}, {"40", 1}, {"1500", 3}} {
		f := newFixture(t)
		f.hire(t, "w-echo", domain.WorkerAI)
		f.settle(t)
		f.rec.reset()
		withInsights(t, f)
		if err := f.st.SetSetting(t.Context(), dispatch.MemoryTokensSetting, tc.budget); err != nil {
			t.Fatal(err)
		}
		f.publish(t, "w-owner", "invoice missing, resend the pdf?")
		f.settle(t)
		if got := strings.Count(f.rec.runs[0].Prompt, "(effectiveness "); got != tc.want {
			t.Errorf("budget %s: %d insights in the prompt, want %d:\n%s", tc.budget, got, tc.want, f.rec.runs[0].Prompt)
		}
	}
}

// TestRenderPromptInsightsGolden: how injected insights read to an agent.
func TestRenderPromptInsightsGolden(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	trig := domain.Trigger{Kind: domain.TriggerEvent, Event: domain.Event{ID: "e-1", StreamID: "s-support", Seq: 1, Source: "w-maya", SourceKind: domain.SourceHuman, CreatedAt: at,
		Message: domain.Message{From: "w-maya", Body: "The payments tests fail again."}}}
	var mem []dispatch.PromptInsight
	for _, r := range []domain.Ranked{
		{Insight: domain.Insight{ID: "i-mock", Trigger: "payments tests fail", Resolution: "start the payments mock (make mock) before the tests", Type: domain.InsightPattern}, Effectiveness: 0.83, Relevance: 1},
		{Insight: domain.Insight{ID: "i-retry", Trigger: "payments tests flaky", Resolution: "rerun them until green", Type: domain.InsightPattern}, Effectiveness: 0.21, Relevance: 0.8},
		{Insight: domain.Insight{ID: "i-owner", Trigger: "payments module", Resolution: "Ana owns it;\nask her", Type: domain.InsightFact}, Effectiveness: 0.5, Relevance: 0.6},
	} {
		mem = append(mem, dispatch.PromptInsight{Ranked: r, Use: r.Use(domain.DefaultConstraintRelevance)})
	}
	got := dispatch.RenderPrompt(domain.Worker{ID: "w-echo", Name: "Echo"}, domain.Activation{ID: "a-0002"}, []domain.Trigger{trig}, mem)
	path := filepath.Join("testdata", "prompt_insights.golden.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./dispatch -run Golden -update)", err)
	}
	if string(want) != got {
		t.Errorf("the prompt's insights changed; if meant, run go test ./dispatch -run Golden -update and review the diff.\ngot:\n%s", got)
	}
}

// TestProvenButIrrelevantIsContext: advice proven elsewhere that reads
// only a little like this run's trigger is given as context, not as a
// constraint, until memory.constraint_min_relevance is lowered to it.
func TestProvenButIrrelevantIsContext(t *testing.T) {
	for _, tc := range []struct {
		setting, want string
	}{{"", "Context:"}, {"0", "Constraints (advice that has worked here; follow it):"}} {
		t.Run("setting "+tc.setting, func(t *testing.T) {
			f := newFixture(t)
			f.hire(t, "w-echo", domain.WorkerAI)
			f.settle(t)
			f.rec.reset()
			ctx := t.Context()
			if tc.setting != "" {
				if err := f.st.SetSetting(ctx, dispatch.ConstraintRelevanceSetting, tc.setting); err != nil {
					t.Fatal(err)
				}
			}
			best, err := f.st.StoreInsight(ctx, "w-owner", domain.Insight{Trigger: "customer invoice missing resend", Resolution: "check the billing export first",
				Type: domain.InsightPattern, Scope: domain.ScopeOrg}, 0)
			if err != nil {
				t.Fatal(err)
			}
			creds, err := f.st.StoreInsight(ctx, "w-owner", domain.Insight{Trigger: "billing credentials rotate monthly", Resolution: "the invoice API key is in the vault",
				Type: domain.InsightFact, Scope: domain.ScopeOrg}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.st.InsightFeedback(ctx, "w-owner", "", []string{creds.ID}, domain.OutcomeHelped, "right, when it applies"); err != nil {
				t.Fatal(err)
			}
			f.publish(t, "w-owner", "A customer says their invoice is missing. Resend it?")
			f.settle(t)
			if len(f.rec.runs) != 1 {
				t.Fatalf("%d runs, want 1", len(f.rec.runs))
			}
			p := f.rec.runs[0].Prompt
			if got := sectionOf(p, creds.ID); got != tc.want {
				t.Errorf("prompt gives %s under %q, want %q:\n%s", creds.ID, got, tc.want, p)
			}
			if !strings.Contains(p, best.ID) {
				t.Errorf("prompt lacks the best match %s:\n%s", best.ID, p)
			}
		})
	}
}

// sectionOf is the heading of the prompt's insight section id is listed in.
func sectionOf(prompt, id string) string {
	heading := ""
	for _, line := range strings.Split(prompt, "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "- ") {
			heading = line
		}
		if strings.HasPrefix(line, "- "+id+" ") {
			return heading
		}
	}
	return ""
}

package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

// citedAndEnded runs w-echo's a-run, which cites one org insight and
// succeeds; it returns the insight.
func citedAndEnded(t *testing.T, f fixture) insightOut {
	t.Helper()
	in := withInsight(t, f, "w-owner", map[string]any{"trigger": "refund over 100", "resolution": "ask a human", "scope": "org"})
	running(t, f, "w-echo", "a-run")
	run := *f.as("w-echo")
	run.ActivationID = "a-run"
	mustCall[insightFeedbackOut](t, &run, "insight_feedback", map[string]any{"ids": []string{in.ID}, "outcome": "utilized"})
	a, err := f.env.Store.GetActivation(t.Context(), "a-run")
	if err != nil {
		t.Fatal(err)
	}
	a.Status = domain.ActivationSucceeded
	if err := f.env.Store.FinishActivation(t.Context(), a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-echo", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestRateActivation(t *testing.T) {
	runTable(t, "rate_activation", []toolCase[rateActivationOut]{
		{
			name:  "the owner's rating overrides the run's success: what it cited is credited failed, once",
			setup: func(t *testing.T, f fixture) { citedAndEnded(t, f) },
			args:  map[string]any{"activation": "a-run", "outcome": "failed", "note": "it refunded twice"},
			want:  rateActivationOut{Activation: "a-run", Outcome: "failed", Source: "rating", By: "w-owner", Note: "it refunded twice", At: t0},
			check: func(t *testing.T, f fixture, _ rateActivationOut) {
				ins := mustCall[listInsightsOut](t, f.env, "list_insights", map[string]any{"scope": "org"}).Insights
				if len(ins) != 1 || ins[0].Helped != 0 || ins[0].Failed != 1 {
					t.Errorf("insights = %+v, want the cited one helped 0, failed 1", ins)
				}
			},
		},
		{
			name: "a person above the worker rates its run",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-desk", "a-desk")
			},
			caller: "w-lead",
			args:   map[string]any{"activation": "a-desk", "outcome": "succeeded"},
			want:   rateActivationOut{Activation: "a-desk", Outcome: "helped", Source: "rating", By: "w-lead", At: t0},
		},
		{
			name:  "rated succeeded with a note: what worked is proposed for the worker's role, quarantined until confirmed",
			setup: func(t *testing.T, f fixture) { citedAndEnded(t, f) },
			args:  map[string]any{"activation": "a-run", "outcome": "succeeded", "note": "it quoted the refund policy page"},
			want:  rateActivationOut{Activation: "a-run", Outcome: "helped", Source: "rating", By: "w-owner", Note: "it quoted the refund policy page", At: t0},
			check: func(t *testing.T, f fixture, got rateActivationOut) {
				ins := mustCall[listInsightsOut](t, f.env, "list_insights", map[string]any{"tag": "proposed"}).Insights
				if len(ins) != 1 || ins[0].ID != got.Proposed || ins[0].Type != "pattern" || !ins[0].Untrusted || ins[0].Trigger != "work" ||
					ins[0].Resolution != "What worked: it quoted the refund policy page" || ins[0].Target != "r-support" {
					t.Errorf("proposed %q; insights tagged proposed: %+v", got.Proposed, ins)
				}
			},
		},
		{name: "an AI worker cannot rate", caller: "w-echo", setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args: map[string]any{"activation": "a-run", "outcome": "succeeded"}, wantErr: []string{"w-echo is an AI worker; only a person rates a run"}, wantIs: domain.ErrForbidden},
		{name: "a person beside the worker cannot", caller: "w-maya",
			setup: func(t *testing.T, f fixture) {
				withLead(t, f)
				running(t, f, "w-desk", "a-desk")
			},
			args: map[string]any{"activation": "a-desk", "outcome": "failed"}, wantErr: []string{"a-desk is a run of w-desk; only a person above w-desk, or w-owner, rates it"}, wantIs: domain.ErrForbidden},
		{name: "bad outcome", setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args: map[string]any{"activation": "a-run", "outcome": "great"}, wantErr: []string{`outcome: unknown rating "great" (valid: "succeeded", "failed")`}, wantIs: domain.ErrInvalid},
		{name: "unknown run", args: map[string]any{"activation": "a-nope", "outcome": "failed"}, wantErr: []string{`activation "a-nope": not found`}, wantIs: domain.ErrNotFound},
		{name: "no run", args: map[string]any{"outcome": "failed"}, wantErr: []string{"activation: is required"}},
	}, cmpopts.EquateApproxTime(0), cmpopts.IgnoreFields(rateActivationOut{}, "Proposed"))
}

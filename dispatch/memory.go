package dispatch

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// MemoryTokensSetting bounds the insights put in an activation's prompt.
var MemoryTokensSetting = domain.SettingSpec{Key: "memory.prompt_tokens", Type: domain.SettingInt, Default: "1500",
	Description: "Token budget of the insights recalled into an activation's prompt; 0 puts none."}

// ConstraintRelevanceSetting is the least relevance of a constraint: proven
// advice about another situation is context, not a rule for this one.
var ConstraintRelevanceSetting = domain.SettingSpec{Key: "memory.constraint_min_relevance", Type: domain.SettingString,
	Default:     strconv.FormatFloat(domain.DefaultConstraintRelevance, 'f', -1, 64),
	Description: "Least relevance (0 to 1, relative to the best match) at which proven advice is shown as a constraint; below it, it is context.",
	Validate: func(v string) error {
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 {
			return fmt.Errorf("must be a number from 0 to 1, such as 0.5")
		}
		return nil
	}}

// HybridSetting turns on hybrid recall: relevance blends BM25 with the
// cosine of the query's and each insight's embedding.
var HybridSetting = domain.SettingSpec{Key: "memory.hybrid", Type: domain.SettingBool, Default: "true",
	Description: "Whether recall blends the embeddings' cosine (memory.embeddings: local hashed character trigrams or the provider's) with BM25 in relevance; false ranks by BM25 alone."}

// ConstraintRelevance reads ConstraintRelevanceSetting.
func ConstraintRelevance(ctx context.Context, st *store.Store) float64 {
	v, _, err := st.Setting(ctx, ConstraintRelevanceSetting.Key)
	f, perr := strconv.ParseFloat(v, 64)
	if err != nil || perr != nil {
		return domain.DefaultConstraintRelevance
	}
	return f
}

// maxQueryTerms bounds the recall query built from a run's triggers.
const maxQueryTerms = 32

// recallFor recalls the insights for a run's triggers that fit the token
// budget and records them shown to the run, so its outcome can credit the
// ones it cites. Memory is advice: when recall fails the run goes ahead
// without it, and the failure is logged once here. Quarantined insights
// (stored by a run that had read untrusted data, not yet endorsed) are
// never given unasked; the run's label is raised by what it is given.
func (d *Dispatcher) recallFor(ctx context.Context, w domain.Worker, act domain.Activation, trigs []domain.Trigger) []PromptInsight {
	budget := int(d.st.IntSetting(ctx, MemoryTokensSetting))
	query := triggerQuery(trigs)
	if budget <= 0 || query == "" {
		return nil
	}
	res, err := d.st.Recall(ctx, w.ID, store.RecallQuery{Query: query, Limit: 10, Hybrid: d.st.BoolSetting(ctx, HybridSetting)})
	if err != nil {
		d.log.Warn("recall insights for a run; it starts without them", "activation", act.ID, "err", err)
		return nil
	}
	var picked []PromptInsight
	var ids []string
	minRel := ConstraintRelevance(ctx, d.st)
	var label domain.Label
	for _, r := range res {
		if r.Insight.Quarantined() {
			continue
		}
		if cost := domain.EstimateTokens(insightLine(r)); cost <= budget {
			budget -= cost
			picked = append(picked, PromptInsight{Ranked: r.Ranked, Use: r.Use(minRel)})
			ids = append(ids, r.Insight.ID)
			label = label.Join(r.Insight.Label)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := d.st.ShowInsights(ctx, act.ID, ids); err != nil {
		d.log.Warn("record insights shown to a run; it starts without them", "activation", act.ID, "err", err)
		return nil
	}
	if !label.IsZero() {
		if _, err := d.st.RaiseLabel(ctx, act.ID, label); err != nil {
			d.log.Warn("raise a run's label by the insights it is given; it starts without them", "activation", act.ID, "err", err)
			return nil
		}
	}
	return picked
}

// triggerQuery is what a run is about: the subjects and bodies of its
// triggers, as search terms.
func triggerQuery(trigs []domain.Trigger) string {
	var text strings.Builder
	for _, t := range trigs {
		if t.Kind == domain.TriggerHire {
			continue
		}
		text.WriteString(t.Event.Message.Subject + " " + t.Event.Message.Body + " ")
	}
	terms := domain.Terms(text.String())
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	return strings.Join(terms, " ")
}

// PromptInsight is an insight given to a run and how it reads there.
type PromptInsight struct {
	domain.Ranked
	Use domain.InsightUse
}

func insightLine(r store.Recalled) string { return formatInsight(r.Ranked) }

func formatInsight(r domain.Ranked) string {
	return fmt.Sprintf("- %s (effectiveness %.2f): when %s → %s\n", r.Insight.ID, r.Effectiveness, oneLine(r.Insight.Trigger), oneLine(r.Insight.Resolution))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeInsights renders the recalled insights as constraints, risks and
// context, with how to cite them.
func writeInsights(b *strings.Builder, mem []PromptInsight) {
	if len(mem) == 0 {
		return
	}
	b.WriteString("\nInsights from the org's memory for these triggers. Cite the ones you actually use: " +
		"insight_feedback {\"ids\": [...], \"outcome\": \"utilized\"}; this run's result then credits them.\n")
	for _, sec := range []struct {
		use   domain.InsightUse
		title string
	}{
		{domain.UseConstraint, "Constraints (advice that has worked here; follow it):"},
		{domain.UseRisk, "Risks (advice that failed, or known failures; avoid them):"},
		{domain.UseContext, "Context:"},
	} {
		first := true
		for _, r := range mem {
			if r.Use != sec.use {
				continue
			}
			if first {
				b.WriteString(sec.title + "\n")
				first = false
			}
			b.WriteString(formatInsight(r.Ranked))
		}
	}
}

package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type insightFeedbackIn struct {
	IDs     []string `json:"ids" jsonschema:"the insights (i-…) the feedback is about"`
	Outcome string   `json:"outcome" jsonschema:"in a run: utilized (your run used them; how the run ends, or what its work becomes, credits them). Outside a run a person votes helped or failed"`
	Note    string   `json:"note,omitempty" jsonschema:"why, for a person's vote outside a run; kept in the insight's history"`
}

// countsOut is an insight's counters after feedback.
type countsOut struct {
	ID            string  `json:"id"`
	Injected      int     `json:"injected"`
	Utilized      int     `json:"utilized"`
	Helped        int     `json:"helped"`
	Failed        int     `json:"failed"`
	Effectiveness float64 `json:"effectiveness"`
}

type insightFeedbackOut struct {
	Insights []countsOut `json:"insights"`
}

func insightFeedback() Tool {
	return define("insight_feedback", "Cite the insights your run utilized (the run's outcome credits them); outside a run, a person votes that an insight helped or failed (one vote each).",
		func(ctx context.Context, env *Env, in insightFeedbackIn) (insightFeedbackOut, error) {
			if err := env.Store.InsightFeedback(ctx, env.Caller, env.ActivationID, in.IDs, domain.InsightOutcome(in.Outcome), in.Note); err != nil {
				return insightFeedbackOut{}, err
			}
			out := insightFeedbackOut{Insights: []countsOut{}}
			for _, id := range in.IDs {
				got, err := env.Store.GetInsight(ctx, id)
				if err != nil {
					return insightFeedbackOut{}, err
				}
				st := got.Stats
				out.Insights = append(out.Insights, countsOut{ID: got.ID, Injected: st.Injected, Utilized: st.Utilized, Helped: st.Helped, Failed: st.Failed,
					Effectiveness: round3(st.LearnedEffectiveness())})
			}
			return out, nil
		}, enum("outcome", domain.InsightOutcomes)).annotated("Insight feedback", adds).inCore(7)
}

package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type insightFeedbackIn struct {
	IDs     []string `json:"ids"`
	Outcome string   `json:"outcome" jsonschema:"utilized: this run used them; its result credits them"`
}

type insightFeedbackOut struct {
	Insights []insightOut `json:"insights"`
}

func insightFeedback() Tool {
	return define("insight_feedback", "Report insights your run utilized, or that helped or failed.",
		func(ctx context.Context, env *Env, in insightFeedbackIn) (insightFeedbackOut, error) {
			if err := env.Store.InsightFeedback(ctx, env.Caller, env.ActivationID, in.IDs, domain.InsightOutcome(in.Outcome)); err != nil {
				return insightFeedbackOut{}, err
			}
			out := insightFeedbackOut{Insights: []insightOut{}}
			for _, id := range in.IDs {
				got, err := env.Store.GetInsight(ctx, id)
				if err != nil {
					return insightFeedbackOut{}, err
				}
				out.Insights = append(out.Insights, insightOf(got))
			}
			return out, nil
		}, enum("outcome", domain.InsightOutcomes))
}

package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type correctInsightIn struct {
	ID         string   `json:"id"`
	Trigger    string   `json:"trigger,omitempty"`
	Resolution string   `json:"resolution,omitempty"`
	Type       string   `json:"type,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Retire     bool     `json:"retire,omitempty"`
	Reason     string   `json:"reason"`
}

type correctInsightOut struct {
	Insight insightOut `json:"insight" jsonschema:"the new version, or the retired one"`
}

func correctInsight() Tool {
	return define("correct_insight", "Correct or retire an insight.",
		func(ctx context.Context, env *Env, in correctInsightIn) (correctInsightOut, error) {
			if in.Type != "" {
				if err := domain.InsightType(in.Type).Validate("type"); err != nil {
					return correctInsightOut{}, err
				}
			}
			if !in.Retire && in.Trigger == "" && in.Resolution == "" && in.Type == "" && in.Tags == nil {
				return correctInsightOut{}, domain.Invalid("resolution", "give trigger, resolution, type or tags to change, or retire")
			}
			got, err := env.Store.CorrectInsight(ctx, env.Caller, in.ID, store.InsightPatch{Trigger: in.Trigger, Resolution: in.Resolution,
				Type: domain.InsightType(in.Type), Tags: in.Tags, Retire: in.Retire, Reason: in.Reason})
			if err != nil {
				return correctInsightOut{}, err
			}
			return correctInsightOut{Insight: insightOf(got)}, nil
		}, enum("type", domain.InsightTypes)).annotated("Correct insight", destructive)
}

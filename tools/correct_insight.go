package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type correctInsightIn struct {
	ID         string   `json:"id" jsonschema:"the insight to correct or retire (i-…)"`
	Trigger    string   `json:"trigger,omitempty" jsonschema:"the new situation it applies to; empty keeps the old one"`
	Resolution string   `json:"resolution,omitempty" jsonschema:"the new advice: what to do in that situation; empty keeps the old one"`
	Type       string   `json:"type,omitempty" jsonschema:"the new type; empty keeps the old one"`
	Tags       []string `json:"tags,omitempty" jsonschema:"the new tags, replacing the old ones"`
	Retire     bool     `json:"retire,omitempty" jsonschema:"true retires the insight instead: it is never recalled again"`
	Reason     string   `json:"reason" jsonschema:"why it is corrected or retired, kept with its history"`
}

type correctInsightOut struct {
	Insight insightOut `json:"insight" jsonschema:"the new version, or the retired one"`
}

func correctInsight() Tool {
	return define("correct_insight", "Supersede an insight with a corrected version, or retire it; the old version is never recalled again.",
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

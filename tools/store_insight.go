package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type storeInsightIn struct {
	Trigger    string   `json:"trigger,omitempty"`
	Resolution string   `json:"resolution"`
	Type       string   `json:"type"`
	Tags       []string `json:"tags,omitempty"`
	Scope      string   `json:"scope,omitempty"`
	Target     string   `json:"target,omitempty"`
	Question   string   `json:"question,omitempty"`
}

type storeInsightOut struct {
	Insight insightOut `json:"insight"`
}

func storeInsight() Tool {
	return define("store_insight", "Store advice: in situation trigger, do resolution.",
		func(ctx context.Context, env *Env, in storeInsightIn) (storeInsightOut, error) {
			ins := domain.Insight{Trigger: in.Trigger, Resolution: in.Resolution, Type: domain.InsightType(in.Type), Tags: in.Tags,
				Scope: domain.InsightScope(in.Scope), Target: in.Target, Activation: env.ActivationID}
			var got domain.Insight
			var err error
			if in.Question != "" {
				got, err = env.Store.AnswerQuestion(ctx, env.Caller, in.Question, ins, similarThreshold(ctx, env.Store))
			} else {
				if ins.Scope == "" && ins.Target == "" {
					ins.Scope, ins.Target = domain.ScopeWorker, env.Caller
				}
				got, err = env.Store.StoreInsight(ctx, env.Caller, ins, similarThreshold(ctx, env.Store))
			}
			if err != nil {
				return storeInsightOut{}, err
			}
			return storeInsightOut{Insight: insightOf(got)}, nil
		}, enum("type", domain.InsightTypes), enum("scope", domain.InsightScopes)).annotated("Store insight", adds)
}

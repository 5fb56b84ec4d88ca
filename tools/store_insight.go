package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type storeInsightIn struct {
	Trigger    string   `json:"trigger,omitempty" jsonschema:"the situation the advice applies to, in words recall can match"`
	Resolution string   `json:"resolution" jsonschema:"the advice: what to do in that situation"`
	Type       string   `json:"type" jsonschema:"pattern: a way that works; failure: a mistake to avoid; preference: how someone likes it; fact: something true"`
	Tags       []string `json:"tags,omitempty" jsonschema:"words to file it under, e.g. billing"`
	Scope      string   `json:"scope,omitempty" jsonschema:"who may recall it; by default you"`
	Target     string   `json:"target,omitempty" jsonschema:"the role (r-…), position (p-…) or worker (w-…) of the scope; omitted for the org"`
	Question   string   `json:"question,omitempty" jsonschema:"a learn question (q-…) this insight answers"`
}

type storeInsightOut struct {
	Insight insightOut `json:"insight"`
}

func storeInsight() Tool {
	return define("store_insight", "Store an insight: advice (resolution) for a situation (trigger), for you, your role or position, the org, or those below you.",
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
		}, enum("type", domain.InsightTypes), enum("scope", domain.InsightScopes)).annotated("Store insight", adds).inCore(5)
}

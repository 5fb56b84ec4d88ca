package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listInsightsIn struct {
	Scope             string `json:"scope,omitempty" jsonschema:"only insights of this scope"`
	Target            string `json:"target,omitempty" jsonschema:"only insights for this role (r-…), position (p-…) or worker (w-…)"`
	Type              string `json:"type,omitempty" jsonschema:"only insights of this type"`
	Tag               string `json:"tag,omitempty" jsonschema:"only insights with this tag"`
	History           string `json:"history,omitempty" jsonschema:"an insight (i-…) whose every version to list instead"`
	IncludeSuperseded bool   `json:"includeSuperseded,omitempty" jsonschema:"true lists corrected and retired versions too"`
}

type listInsightsOut struct {
	Insights []insightOut `json:"insights"`
}

func listInsights() Tool {
	return define("list_insights", "List the insights you may recall, filtered by scope, type or tag, or every version of one with the votes people gave it.",
		func(ctx context.Context, env *Env, in listInsightsIn) (listInsightsOut, error) {
			if in.Scope != "" {
				if err := domain.InsightScope(in.Scope).Validate("scope"); err != nil {
					return listInsightsOut{}, err
				}
			}
			if in.Type != "" {
				if err := domain.InsightType(in.Type).Validate("type"); err != nil {
					return listInsightsOut{}, err
				}
			}
			ins, err := env.Store.ListInsights(ctx, env.Caller, store.InsightFilter{Scope: domain.InsightScope(in.Scope), Target: in.Target,
				Type: domain.InsightType(in.Type), Tag: in.Tag, History: in.History, IncludeSuperseded: in.IncludeSuperseded})
			if err != nil {
				return listInsightsOut{}, err
			}
			var votes []domain.InsightVote
			if in.History != "" {
				if votes, err = env.Store.InsightVotes(ctx, env.Caller, in.History); err != nil {
					return listInsightsOut{}, err
				}
			}
			out := listInsightsOut{Insights: []insightOut{}}
			var label domain.Label
			for _, x := range ins {
				label = label.Join(x.Label)
				o := insightOf(x)
				for _, v := range votes {
					if v.Insight == x.ID {
						o.Votes = append(o.Votes, voteOut{Voter: v.Voter, Outcome: string(v.Outcome), Weight: v.Weight, Note: v.Note, At: v.At})
					}
				}
				out.Insights = append(out.Insights, o)
			}
			return out, env.saw(ctx, label)
		}, enum("scope", domain.InsightScopes), enum("type", domain.InsightTypes)).annotated("List insights", readOnly|idempotent)
}

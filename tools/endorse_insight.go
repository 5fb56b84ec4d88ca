package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type endorseInsightIn struct {
	ID string `json:"id" jsonschema:"the quarantined insight to trust (in-…), as recall or list_insights names it"`
}

// endorseInsight lets a person vouch for advice a run stored after
// reading untrusted data: until then recall shows it marked untrusted and
// no prompt is given it. A model's word is not enough, so AI callers are
// refused, whatever their grants.
func endorseInsight() Tool {
	return define("endorse_insight", "Vouch for a quarantined insight (people only): recall then ranks it normally and prompts may include it.",
		func(ctx context.Context, env *Env, in endorseInsightIn) (storeInsightOut, error) {
			if in.ID == "" {
				return storeInsightOut{}, domain.Required("id")
			}
			if env.ActivationID != "" {
				return storeInsightOut{}, domain.Forbidden("endorse_insight is a person's decision; an agent run (%s) cannot endorse", env.ActivationID)
			}
			got, err := env.Store.EndorseInsight(ctx, env.Caller, in.ID)
			if err != nil {
				return storeInsightOut{}, err
			}
			return storeInsightOut{Insight: insightOf(got)}, nil
		}).annotated("Endorse insight", idempotent)
}

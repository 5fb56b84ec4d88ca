package tools

import (
	"context"
	"fmt"
)

type consolidateInsightsIn struct{}

// proposalOut is one proposed change and the call that accepts it.
type proposalOut struct {
	Kind   string   `json:"kind" jsonschema:"merge, prune or dormant"`
	IDs    []string `json:"ids"`
	Why    string   `json:"why"`
	Accept string   `json:"accept,omitempty"`
}

type consolidateInsightsOut struct {
	Proposals []proposalOut `json:"proposals"`
}

func consolidateInsights() Tool {
	return define("consolidate_insights", "Propose insight merges (near-duplicates), retirements (keep failing) and dormant ones; each with the call that accepts it.",
		func(ctx context.Context, env *Env, _ consolidateInsightsIn) (consolidateInsightsOut, error) {
			m, err := env.Store.InsightMaintenance(ctx, env.Caller, similarThreshold(ctx, env.Store))
			if err != nil {
				return consolidateInsightsOut{}, err
			}
			out := consolidateInsightsOut{Proposals: []proposalOut{}}
			for _, l := range m.Merges {
				out.Proposals = append(out.Proposals, proposalOut{Kind: "merge", IDs: []string{l.From, l.To},
					Why:    fmt.Sprintf("%.0f%% of their terms overlap", 100*l.Similarity),
					Accept: fmt.Sprintf(`correct_insight {"id": %q, "retire": true, "reason": "merged into %s"}`, l.From, l.To)})
			}
			for _, in := range m.Prune {
				out.Proposals = append(out.Proposals, proposalOut{Kind: "prune", IDs: []string{in.ID},
					Why:    fmt.Sprintf("effectiveness %.2f after %d helped, %d failed", in.Stats.LearnedEffectiveness(), in.Stats.Helped, in.Stats.Failed),
					Accept: fmt.Sprintf(`correct_insight {"id": %q, "retire": true, "reason": "keeps failing"}`, in.ID)})
			}
			for _, in := range m.Dormant {
				out.Proposals = append(out.Proposals, proposalOut{Kind: "dormant", IDs: []string{in.ID}, Why: "not used for 30 days or more"})
			}
			return out, nil
		}).annotated("Consolidate insights", readOnly|idempotent)
}

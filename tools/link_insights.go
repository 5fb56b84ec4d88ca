package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type linkInsightsIn struct {
	From string `json:"from" jsonschema:"the insight the link starts at (i-…)"`
	To   string `json:"to" jsonschema:"the insight it points to (i-…)"`
	Kind string `json:"kind" jsonschema:"similar: they say much the same; led_to: from led to to"`
}

type linkInsightsOut struct {
	Links []linkOut `json:"links" jsonschema:"every link of from"`
}

type linkOut struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Kind       string  `json:"kind"`
	Similarity float64 `json:"similarity,omitempty"`
}

func linkInsights() Tool {
	return define("link_insights", "Link two insights as similar, or one as having led to the other.",
		func(ctx context.Context, env *Env, in linkInsightsIn) (linkInsightsOut, error) {
			if err := env.Store.LinkInsights(ctx, env.Caller, domain.InsightLink{From: in.From, To: in.To, Kind: domain.InsightLinkKind(in.Kind)}); err != nil {
				return linkInsightsOut{}, err
			}
			links, err := env.Store.InsightLinks(ctx, in.From)
			if err != nil {
				return linkInsightsOut{}, err
			}
			out := linkInsightsOut{Links: []linkOut{}}
			for _, l := range links {
				out.Links = append(out.Links, linkOut{From: l.From, To: l.To, Kind: string(l.Kind), Similarity: round3(max(l.Similarity, 0))})
			}
			return out, nil
		}, enum("kind", domain.InsightLinkKinds)).annotated("Link insights", idempotent)
}

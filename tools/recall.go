package tools

import (
	"context"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type recallIn struct {
	Query  string `json:"query" jsonschema:"the situation, in words: what you are about to do or what went wrong"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many insights; 1 to 50, by default 5"`
	Follow bool   `json:"follow,omitempty" jsonschema:"true adds the insights linked to those found, marked with via"`
}

// recalledOut is one result, kept to what an agent acts on (list_insights
// has the rest): the advice, the score and its three parts, how to read
// it, and the link that brought it in when followed.
type recalledOut struct {
	ID            string   `json:"id"`
	Trigger       string   `json:"trigger"`
	Resolution    string   `json:"resolution"`
	Type          string   `json:"type"`
	Tags          []string `json:"tags,omitempty"`
	Score         float64  `json:"score"`
	Relevance     float64  `json:"relevance"`
	Effectiveness float64  `json:"effectiveness"`
	Recency       float64  `json:"recency"`
	Use           string   `json:"use"`
	Via           string   `json:"via,omitempty"`
	ViaKind       string   `json:"viaKind,omitempty"`
	// Untrusted marks a quarantined insight: stored by a run that had
	// read untrusted data (Origin), not yet endorsed by a person.
	Untrusted bool   `json:"untrusted,omitempty"`
	Origin    string `json:"origin,omitempty"`
}

type recallOut struct {
	Results []recalledOut `json:"results"`
}

func recall() Tool {
	return define("recall", "Recall the insights (advice) that match a situation, ranked by relevance, effectiveness and recency.",
		func(ctx context.Context, env *Env, in recallIn) (recallOut, error) {
			res, err := env.Store.Recall(ctx, env.Caller, store.RecallQuery{Query: in.Query, Limit: in.Limit, Follow: in.Follow, Activation: env.ActivationID,
				Hybrid: env.Store.BoolSetting(ctx, dispatch.HybridSetting)})
			if err != nil {
				return recallOut{}, err
			}
			out := recallOut{Results: []recalledOut{}}
			var label domain.Label
			minRel := dispatch.ConstraintRelevance(ctx, env.Store)
			for _, r := range res {
				in := r.Insight
				label = label.Join(in.Label)
				out.Results = append(out.Results, recalledOut{ID: in.ID, Trigger: in.Trigger, Resolution: in.Resolution, Type: string(in.Type), Tags: in.Tags, Score: round3(r.Score), Relevance: round3(r.Relevance),
					Effectiveness: round3(r.Effectiveness), Recency: round3(r.Recency), Use: string(r.Use(minRel)), Via: r.Via, ViaKind: string(r.ViaKind),
					Untrusted: in.Quarantined(), Origin: in.Label.Origin})
			}
			return out, env.saw(ctx, label)
		}).annotated("Recall insights", readOnly|idempotent).inCore(4)
}

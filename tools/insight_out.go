package tools

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// insightOut is an insight as tools show it.
type insightOut struct {
	ID            string     `json:"id"`
	Version       int        `json:"version"`
	Trigger       string     `json:"trigger"`
	Resolution    string     `json:"resolution"`
	Type          string     `json:"type"`
	Tags          []string   `json:"tags,omitempty"`
	Scope         string     `json:"scope"`
	Target        string     `json:"target,omitempty"`
	StoredBy      string     `json:"storedBy"`
	Activation    string     `json:"activation,omitempty"`
	Supersedes    string     `json:"supersedes,omitempty"`
	SupersededBy  string     `json:"supersededBy,omitempty"`
	Retired       bool       `json:"retired,omitempty"`
	Reason        string     `json:"reason,omitempty"`
	Injected      int        `json:"injected"`
	Utilized      int        `json:"utilized"`
	Helped        int        `json:"helped"`
	Failed        int        `json:"failed"`
	Effectiveness float64    `json:"effectiveness"`
	LastUsed      *time.Time `json:"lastUsed,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	// Untrusted marks a quarantined insight (Origin says why) until a
	// person endorses it (EndorsedBy).
	Untrusted  bool   `json:"untrusted,omitempty"`
	Origin     string `json:"origin,omitempty"`
	EndorsedBy string `json:"endorsedBy,omitempty"`
	// Votes are people's votes on this version, listed with its history.
	Votes []voteOut `json:"votes,omitempty"`
}

// voteOut is one person's vote on an insight outside a run.
type voteOut struct {
	Voter   string    `json:"voter"`
	Outcome string    `json:"outcome"`
	Weight  float64   `json:"weight" jsonschema:"2 for a person above the insight's scope (the owner for the org's), else 1"`
	Note    string    `json:"note,omitempty"`
	At      time.Time `json:"at"`
}

func insightOf(in domain.Insight) insightOut {
	out := insightOut{ID: in.ID, Version: in.Version, Trigger: in.Trigger, Resolution: in.Resolution, Type: string(in.Type), Tags: in.Tags,
		Scope: string(in.Scope), Target: in.Target, StoredBy: in.StoredBy, Activation: in.Activation, Supersedes: in.Supersedes,
		SupersededBy: in.SupersededBy, Retired: in.Retired, Reason: in.Reason, Injected: in.Stats.Injected, Utilized: in.Stats.Utilized,
		Helped: in.Stats.Helped, Failed: in.Stats.Failed, Effectiveness: round3(in.Stats.LearnedEffectiveness()), CreatedAt: in.CreatedAt,
		Untrusted: in.Quarantined(), Origin: in.Label.Origin, EndorsedBy: in.EndorsedBy}
	if !in.Stats.LastUsed.IsZero() {
		out.LastUsed = &in.Stats.LastUsed
	}
	return out
}

// round3 keeps scores readable: three decimals are all a reader compares.
func round3(f float64) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%.3f", f), 64)
	return v
}

// LinkSimilarSetting is the text overlap at which a new insight is linked
// similar to an existing one, and consolidate proposes a merge.
var LinkSimilarSetting = domain.SettingSpec{
	Key: "memory.similar_percent", Type: domain.SettingInt, Default: "60",
	Description: "Term overlap (Jaccard, percent) at which insights are linked similar and proposed for merging.",
	Validate: func(v string) error {
		if n, _ := strconv.Atoi(v); n < 1 || n > 100 {
			return fmt.Errorf("must be a percentage from 1 to 100")
		}
		return nil
	},
}

// similarThreshold reads LinkSimilarSetting as a fraction.
func similarThreshold(ctx context.Context, st *store.Store) float64 {
	return float64(st.IntSetting(ctx, LinkSimilarSetting)) / 100
}

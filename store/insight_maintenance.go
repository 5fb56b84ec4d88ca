package store

import (
	"context"
	"fmt"
	"time"

	"github.com/helixml/helix-org/domain"
)

// DormantAfter is how long unused before an insight is listed dormant.
const DormantAfter = 30 * 24 * time.Hour

// Maintenance is what consolidate proposes over the insights a reader
// may see; nothing in it has been changed. Merges are pairs of current
// insights linked similar at or above the threshold (the older would be
// retired into the newer), Prune those the learned ranking sinks because
// they keep failing, Dormant those unused for DormantAfter.
type Maintenance struct {
	Merges  []domain.InsightLink
	Prune   []domain.Insight
	Dormant []domain.Insight
}

// InsightMaintenance lists merge, prune and dormancy proposals.
func (s *Store) InsightMaintenance(ctx context.Context, reader string, threshold float64) (Maintenance, error) {
	ins, err := s.ListInsights(ctx, reader, InsightFilter{})
	if err != nil {
		return Maintenance{}, err
	}
	byID := map[string]domain.Insight{}
	var m Maintenance
	now := s.Now()
	for _, in := range ins {
		byID[in.ID] = in
		switch {
		case domain.Rank(domain.RankLearned, []domain.Candidate{{Insight: in}}, now, 1)[0].Sunk:
			m.Prune = append(m.Prune, in)
		case now.Sub(lastUse(in)) >= DormantAfter:
			m.Dormant = append(m.Dormant, in)
		}
	}
	var links []insightLinkRow
	if err := s.read(ctx).Where("kind = ? AND similarity >= ?", string(domain.LinkSimilar), threshold).Order("similarity DESC, from_id, to_id").Find(&links).Error; err != nil {
		return Maintenance{}, fmt.Errorf("similar insights: %w", err)
	}
	for _, l := range links {
		a, okA := byID[l.FromID]
		b, okB := byID[l.ToID]
		if !okA || !okB {
			continue
		}
		if b.CreatedAt.Before(a.CreatedAt) {
			a, b = b, a
		}
		m.Merges = append(m.Merges, domain.InsightLink{From: a.ID, To: b.ID, Kind: domain.LinkSimilar, Similarity: l.Similarity})
	}
	return m, nil
}

func lastUse(in domain.Insight) time.Time {
	if in.Stats.LastUsed.IsZero() {
		return in.CreatedAt
	}
	return in.Stats.LastUsed
}

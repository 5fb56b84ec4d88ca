package store

import (
	"context"
	"fmt"
	"time"
)

// InsightRun is one run an insight was shown to: whether the run cited it
// as utilized, and the outcome it was credited with ("helped", "failed",
// or "" while none was).
type InsightRun struct {
	Activation string
	Utilized   bool
	Credited   string
	At         time.Time
}

// InsightRuns is an insight's feedback history: the runs it was shown to,
// newest first, at most limit. The caller has checked the reader may
// recall it.
func (s *Store) InsightRuns(ctx context.Context, id string, limit int) ([]InsightRun, error) {
	var rows []insightUseRow
	if err := s.read(ctx).Where("insight_id = ?", id).Order("created_at DESC, activation_id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("runs of insight %s: %w", id, err)
	}
	return mapRows(rows, func(r insightUseRow) InsightRun {
		return InsightRun{Activation: r.ActivationID, Utilized: r.Utilized, Credited: r.Credited, At: r.CreatedAt.UTC()}
	}), nil
}

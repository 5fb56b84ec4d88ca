package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// MemoryHealth summarises the insight memory over every insight (the
// owner's view): counts by type, scope and state, what needs a look, and
// the feedback the loop gets. Each figure is one aggregate query, so a
// scrape stays cheap however many insights there are.
func (s *Store) MemoryHealth(ctx context.Context) (domain.MemoryHealth, error) {
	tx := s.read(ctx)
	h := domain.MemoryHealth{ByType: map[domain.InsightType]int{}, ByScope: map[domain.InsightScope]int{}, ByState: map[string]int{},
		Feedback: domain.MemoryFeedback{Outcomes: []domain.OutcomeCount{}}}
	current := "superseded_by = '' AND NOT retired"
	for _, g := range []struct {
		col, where string
		put        func(k string, n int)
	}{
		{"type", current, func(k string, n int) { h.ByType[domain.InsightType(k)] = n; h.Current += n }},
		{"scope", current, func(k string, n int) { h.ByScope[domain.InsightScope(k)] = n }},
		{"CASE WHEN retired THEN 'retired' WHEN superseded_by <> '' THEN 'superseded' ELSE 'current' END", "1 = 1", func(k string, n int) { h.ByState[k] = n }},
		{"label", current, func(k string, n int) {
			if storedLabel(k).Untrusted {
				h.Quarantined += n
			}
		}},
	} {
		if err := groupCount(tx.Model(&insightRow{}).Where(g.where), g.col, g.put); err != nil {
			return h, fmt.Errorf("memory health: %w", err)
		}
	}
	staleBefore := s.Now().Add(-DormantAfter)
	for _, c := range []struct {
		n     *int
		where string
		args  []any
	}{
		{&h.Stale, current + " AND COALESCE(last_used, created_at) <= ?", []any{staleBefore}},
		{&h.Contested, current + " AND helped >= ? AND failed >= ?", []any{domain.ContestedEach, domain.ContestedEach}},
		{&h.Sunk, current + " AND credit_failed - credit_helped >= ?", []any{domain.SinkMargin}},
	} {
		var n int64
		if err := tx.Model(&insightRow{}).Where(c.where, c.args...).Count(&n).Error; err != nil {
			return h, fmt.Errorf("memory health: %w", err)
		}
		*c.n = int(n)
	}
	return h, s.feedbackHealth(tx, &h.Feedback)
}

// feedbackHealth fills what the loop hears.
func (s *Store) feedbackHealth(tx *gorm.DB, f *domain.MemoryFeedback) error {
	for _, c := range []struct {
		n    *int
		q    *gorm.DB
		what string
	}{
		{&f.RunsShown, tx.Model(&insightUseRow{}).Distinct("activation_id"), "runs shown"},
		{&f.RunsCiting, tx.Model(&insightUseRow{}).Where("utilized").Distinct("activation_id"), "runs citing"},
		{&f.Votes, tx.Model(&insightVoteRow{}), "votes"},
		{&f.Voters, tx.Model(&insightVoteRow{}).Distinct("voter"), "voters"},
	} {
		var n int64
		if err := c.q.Count(&n).Error; err != nil {
			return fmt.Errorf("memory health: %s: %w", c.what, err)
		}
		*c.n = int(n)
	}
	if f.RunsShown > 0 {
		f.CiteRate = float64(f.RunsCiting) / float64(f.RunsShown)
	}
	var rows []struct {
		Source, Outcome string
		N               int
	}
	if err := tx.Model(&runOutcomeRow{}).Select("source, outcome, COUNT(*) AS n").Group("source, outcome").Order("source, outcome").Scan(&rows).Error; err != nil {
		return fmt.Errorf("memory health: outcomes: %w", err)
	}
	helped, all := 0, 0
	for _, r := range rows {
		f.Outcomes = append(f.Outcomes, domain.OutcomeCount{Source: domain.OutcomeSource(r.Source), Outcome: domain.InsightOutcome(r.Outcome), Runs: r.N})
		all += r.N
		if r.Outcome == string(domain.OutcomeHelped) {
			helped += r.N
		}
	}
	if all > 0 {
		f.HelpedRate = float64(helped) / float64(all)
	}
	return nil
}

// groupCount counts q's rows by the expression col and hands each group to
// put.
func groupCount(q *gorm.DB, col string, put func(k string, n int)) error {
	var rows []struct {
		K string
		N int
	}
	if err := q.Select(col + " AS k, COUNT(*) AS n").Group("k").Scan(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		put(r.K, r.N)
	}
	return nil
}

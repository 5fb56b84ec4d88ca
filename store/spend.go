package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// activationStreamRow attributes an activation's model calls to a stream:
// one row per stream whose events triggered the run. A run triggered on
// two streams counts fully against each.
type activationStreamRow struct {
	ActivationID string `gorm:"primaryKey"`
	StreamID     string `gorm:"primaryKey;index"`
}

func (activationStreamRow) TableName() string { return "activation_streams" }

// streamsOfActivation are the streams of the events that triggered act,
// read through its trigger ids, which never change.
func streamsOfActivation(tx *gorm.DB, act activationRow) ([]string, error) {
	var ids []int64
	if err := json.Unmarshal([]byte(act.TriggerIDs), &ids); err != nil || len(ids) == 0 {
		return nil, nil
	}
	var streams []string
	err := tx.Table("triggers").Joins("JOIN events ON events.seq = triggers.event_seq").Where("triggers.id IN ?", ids).
		Distinct().Order("events.stream_id").Pluck("events.stream_id", &streams).Error
	if err != nil {
		return nil, fmt.Errorf("streams of activation %s: %w", act.ID, err)
	}
	return streams, nil
}

// recordActivationStreams writes act's streams for spend by stream, once.
func (s *Store) recordActivationStreams(tx *gorm.DB, act activationRow) ([]string, error) {
	streams, err := streamsOfActivation(tx, act)
	if err != nil || len(streams) == 0 {
		return streams, err
	}
	rows := make([]activationStreamRow, len(streams))
	for i, st := range streams {
		rows[i] = activationStreamRow{ActivationID: act.ID, StreamID: st}
	}
	return streams, tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
}

// calls selects model calls in [since, until) (a zero since and a nil
// until are open), of one scope: a worker's, a stream's (through
// activation_streams), or all of them.
func calls(tx *gorm.DB, scope domain.BudgetScope, target string, since time.Time, until *time.Time) *gorm.DB {
	q := tx.Table("model_calls")
	switch scope {
	case domain.BudgetWorker:
		q = q.Where("model_calls.worker_id = ?", target)
	case domain.BudgetStream:
		q = q.Joins("JOIN activation_streams ON activation_streams.activation_id = model_calls.activation_id").
			Where("activation_streams.stream_id = ?", target)
	}
	if !since.IsZero() {
		q = q.Where("model_calls.created_at >= ?", since.UTC())
	}
	if until != nil {
		q = q.Where("model_calls.created_at < ?", until.UTC())
	}
	return q
}

// spendSums is one aggregate row of model calls.
type spendSums struct {
	Grp      string
	Calls    int64
	Input    int64
	Output   int64
	Nanos    int64
	Unpriced int64
	Outside  int64
}

// spendColumns add up a selection of the ledger: model calls and outside
// tool calls (model_calls.tool set) apart.
const spendColumns = "COALESCE(SUM(CASE WHEN model_calls.tool = '' THEN 1 ELSE 0 END), 0) AS calls, " +
	"COALESCE(SUM(CASE WHEN model_calls.tool = '' THEN 0 ELSE 1 END), 0) AS outside, COALESCE(SUM(model_calls.input_tokens), 0) AS input, COALESCE(SUM(model_calls.output_tokens), 0) AS output, " +
	"COALESCE(SUM(model_calls.cost_nanos), 0) AS nanos, " +
	"COALESCE(SUM(CASE WHEN model_calls.priced THEN 0 ELSE model_calls.input_tokens + model_calls.output_tokens END), 0) AS unpriced"

func (r spendSums) spend() domain.Spend {
	return domain.Spend{Calls: r.Calls, InputTokens: r.Input, OutputTokens: r.Output, Money: domain.Money(r.Nanos), UnpricedTokens: r.Unpriced, OutsideCalls: r.Outside}
}

// spendOf adds up one scope's calls in [since, until).
func spendOf(tx *gorm.DB, scope domain.BudgetScope, target string, since time.Time, until *time.Time) (domain.Spend, error) {
	var sums spendSums
	if err := calls(tx, scope, target, since, until).Select(spendColumns).Scan(&sums).Error; err != nil {
		return domain.Spend{}, fmt.Errorf("spend of %s %s: %w", scope, target, err)
	}
	sp := sums.spend()
	if sp.UnpricedTokens > 0 {
		err := calls(tx, scope, target, since, until).Where("NOT model_calls.priced").Distinct().Order("model_calls.model").
			Pluck("model_calls.model", &sp.UnpricedModels).Error
		if err != nil {
			return domain.Spend{}, fmt.Errorf("unpriced models of %s %s: %w", scope, target, err)
		}
	}
	return sp, nil
}

// SpendLine is the spend of one worker, stream or model.
type SpendLine struct {
	Key string
	domain.Spend
}

// SpendReport is what model calls cost in a period, in all and by
// worker, by stream (a run triggered on two streams counts in each, so
// the streams may add up to more than the total) and by model.
type SpendReport struct {
	Since   time.Time
	Until   *time.Time
	Total   domain.Spend
	Workers []SpendLine
	Streams []SpendLine
	Models  []SpendLine
}

// Spend reports spend in [since, until); a zero since and a nil until are
// open.
func (s *Store) Spend(ctx context.Context, since time.Time, until *time.Time) (SpendReport, error) {
	tx := s.read(ctx)
	rep := SpendReport{Since: since, Until: until}
	var err error
	if rep.Total, err = spendOf(tx, domain.BudgetOrg, "", since, until); err != nil {
		return rep, err
	}
	groups := []struct {
		into   *[]SpendLine
		scope  domain.BudgetScope
		column string
	}{{&rep.Workers, "", "model_calls.worker_id"}, {&rep.Streams, domain.BudgetStream, "activation_streams.stream_id"}, {&rep.Models, "", "model_calls.model"}}
	for _, g := range groups {
		q := calls(tx, "", "", since, until)
		if g.scope == domain.BudgetStream {
			q = q.Joins("JOIN activation_streams ON activation_streams.activation_id = model_calls.activation_id")
		}
		var rows []spendSums
		if err := q.Select(g.column + " AS grp, " + spendColumns).Group(g.column).Order(g.column).Scan(&rows).Error; err != nil {
			return rep, fmt.Errorf("spend by %s: %w", g.column, err)
		}
		*g.into = make([]SpendLine, len(rows))
		for i, r := range rows {
			(*g.into)[i] = SpendLine{Key: r.Grp, Spend: r.spend()}
		}
	}
	for i, m := range rep.Models {
		if m.UnpricedTokens > 0 {
			rep.Models[i].UnpricedModels = []string{m.Key}
		}
	}
	return rep, nil
}

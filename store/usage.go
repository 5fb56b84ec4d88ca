package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// modelCallRow is one model call the server relayed for an activation:
// what it cost, in tokens, as the provider reported it. It is the ledger
// that activation totals (and later budgets) are read from.
type modelCallRow struct {
	ID           int64     `gorm:"primaryKey;autoIncrement"`
	ActivationID string    `gorm:"not null;index"`
	WorkerID     string    `gorm:"not null;index"`
	Model        string    `gorm:"not null"`
	InputTokens  int64     `gorm:"not null"`
	OutputTokens int64     `gorm:"not null"`
	CreatedAt    time.Time `gorm:"index"`
	// CostNanos is what the call cost at the price in force when it was
	// made (domain.Money); Priced is false for a model llm.prices did not
	// list, whose tokens count but cost no money.
	CostNanos int64 `gorm:"not null;default:0"`
	Priced    bool  `gorm:"not null;default:false"`
	// Tool is the outside tool (<server>__<tool>) of a call to an outside
	// MCP server, which costs no tokens and what mcp.prices says; empty
	// for a model call.
	Tool string `gorm:"not null;default:''"`
}

func (modelCallRow) TableName() string { return "model_calls" }

// Usage is one relayed model call as the relay metered and priced it.
type Usage struct {
	Model         string
	Input, Output int64
	Cost          domain.Money
	Priced        bool
	// Reservation is the call's hold (ReserveModelCall), settled by the
	// same transaction that records the call.
	Reservation string
}

// RecordUsage adds one relayed model call of an activation to the ledger
// and charges it to the budgets over the activation's worker, the streams
// of its triggers and the org, in one transaction that also deletes the
// call's hold (u.Reservation), so what it really cost replaces what it
// held: a soft threshold
// crossed sends its notices, a hard one reached holds the scope. It
// returns the first budget the call took to its hard limit (the call is
// on the ledger either way: the provider charged it).
func (s *Store) RecordUsage(ctx context.Context, activationID string, u Usage) (*domain.BudgetExceededError, error) {
	var stop *domain.BudgetExceededError
	err := s.write(ctx, func(tx *gorm.DB) error {
		var act activationRow
		if err := tx.Select("id", "worker_id", "trigger_ids").Where("id = ?", activationID).Take(&act).Error; err != nil {
			return notFoundOr(err, "activation", activationID)
		}
		call := modelCallRow{ActivationID: act.ID, WorkerID: act.WorkerID, Model: u.Model,
			InputTokens: u.Input, OutputTokens: u.Output, CostNanos: int64(u.Cost), Priced: u.Priced, CreatedAt: s.Now()}
		if err := tx.Create(&call).Error; err != nil {
			return err
		}
		if u.Reservation != "" {
			if err := tx.Where("id = ?", u.Reservation).Delete(&reservationRow{}).Error; err != nil {
				return fmt.Errorf("settle hold %s: %w", u.Reservation, err)
			}
		}
		streams, err := s.recordActivationStreams(tx, act)
		if err != nil {
			return err
		}
		stop, err = s.chargeBudgets(tx, act, streams, call)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record usage of %s: %w", activationID, err)
	}
	return stop, nil
}

// ModelCalls lists an activation's relayed model calls, oldest first.
func (s *Store) ModelCalls(ctx context.Context, activationID string) ([]domain.ModelCall, error) {
	var rows []modelCallRow
	if err := s.read(ctx).Where("activation_id = ?", activationID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("model calls of %s: %w", activationID, err)
	}
	return mapRows(rows, modelCallRow.toDomain), nil
}

func (r modelCallRow) toDomain() domain.ModelCall {
	return domain.ModelCall{ActivationID: r.ActivationID, WorkerID: r.WorkerID, Model: r.Model,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Cost: domain.Money(r.CostNanos), Priced: r.Priced, At: r.CreatedAt.UTC()}
}

// withRelayedTokens sets each activation's tokens and cost from the ledger. An
// activation with no relayed model call keeps the tokens and cost its runtime
// reported (an agent an operator let talk to a provider directly,
// agent.docker.env, is still counted), plus what its outside tool calls cost.
func (s *Store) withRelayedTokens(ctx context.Context, acts []domain.Activation) error {
	ids := make([]string, len(acts))
	for i, a := range acts {
		ids[i] = a.ID
	}
	type sum struct {
		ActivationID              string
		Models                    int64
		InputTokens, OutputTokens int64
		ModelNanos, OutsideNanos  int64
	}
	sums := map[string]sum{}
	for chunk := range slices.Chunk(ids, 500) { // SQLite's limit on variables
		var rows []sum
		err := s.read(ctx).Model(&modelCallRow{}).Select("activation_id, SUM(CASE WHEN tool = '' THEN 1 ELSE 0 END) AS models, "+
			"SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "+
			"SUM(CASE WHEN tool = '' THEN cost_nanos ELSE 0 END) AS model_nanos, SUM(CASE WHEN tool = '' THEN 0 ELSE cost_nanos END) AS outside_nanos").
			Where("activation_id IN ?", chunk).Group("activation_id").Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("sum relayed tokens: %w", err)
		}
		for _, r := range rows {
			sums[r.ActivationID] = r
		}
	}
	for i, a := range acts {
		r, ok := sums[a.ID]
		if !ok {
			continue
		}
		if r.Models > 0 {
			acts[i].InputTokens, acts[i].OutputTokens, acts[i].Cost = r.InputTokens, r.OutputTokens, domain.Money(r.ModelNanos)
		}
		acts[i].Cost += domain.Money(r.OutsideNanos)
	}
	return nil
}

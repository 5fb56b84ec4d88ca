package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// isPerson refuses anyone but a human worker: what says the rest of the
// sentence.
func isPerson(tx *gorm.DB, actor, what string) error {
	if actor == "" {
		return domain.Forbidden("only a person %s; this call has no worker", what)
	}
	var w workerRow
	if err := tx.Select("kind").Where("id = ?", actor).Take(&w).Error; err != nil {
		return notFoundOr(err, "worker", actor)
	}
	if w.Kind != string(domain.WorkerHuman) {
		return domain.Forbidden("%s is an AI worker; only a person %s", actor, what)
	}
	return nil
}

// voteTx records actor's vote on in, replacing an earlier one of theirs:
// seven votes of one person move it as much as one. A person votes on
// what they may recall, and on the advice of the scopes below them.
func (s *Store) voteTx(tx *gorm.DB, a *authz, actor string, in domain.Insight, o domain.InsightOutcome, note string) error {
	if !in.Current() {
		return fmt.Errorf("insight %s was superseded by %q (retired: %v); vote on the current version: %w", in.ID, in.SupersededBy, in.Retired, domain.ErrConflict)
	}
	w, err := a.voteWeight(actor, in)
	if err != nil {
		return err
	}
	if err := a.seesInsight(actor, in); err != nil && (w != domain.ManagerVoteWeight || !in.Label.Within([]string{actor})) {
		return err
	}
	now := s.Now()
	row := insightVoteRow{InsightID: in.ID, Voter: actor, Outcome: string(o), Weight: w, Note: note, At: now}
	if err := tx.Save(&row).Error; err != nil {
		return fmt.Errorf("vote on %s: %w", in.ID, err)
	}
	source := votePrefix + actor
	if err := unsettleTx(tx, "c.source = ? AND c.cited = ?", source, in.ID); err != nil {
		return err
	}
	if err := tx.Where("source = ? AND cited = ?", source, in.ID).Delete(&insightCreditRow{}).Error; err != nil {
		return err
	}
	if _, err := ledgerTx(tx, insightCreditRow{Source: source, Cited: in.ID, Outcome: string(o), Weight: w, At: now}, false); err != nil {
		return err
	}
	if err := restatTx(tx, in.ID); err != nil {
		return err
	}
	return s.audit(tx, Change{Action: "vote_insight", Actor: actor, Target: in.ID, After: map[string]any{"outcome": o, "weight": w, "note": note}})
}

// voteWeight is ManagerVoteWeight for a person above the insight's scope
// (the owner for the org's), VoteWeight for anyone else.
func (a *authz) voteWeight(actor string, in domain.Insight) (float64, error) {
	if actor == domain.OwnerWorker {
		return domain.ManagerVoteWeight, nil
	}
	var positions []string
	switch in.Scope {
	case domain.ScopeRole:
		if err := a.tx.Model(&positionRow{}).Where("role_id = ?", in.Target).Pluck("id", &positions).Error; err != nil {
			return 0, err
		}
	case domain.ScopePosition:
		positions = []string{in.Target}
	case domain.ScopeWorker:
		ws, err := a.seat(in.Target)
		if err != nil {
			return 0, err
		}
		positions = []string{ws.Position}
	}
	if len(positions) == 0 {
		return domain.VoteWeight, nil
	}
	as, err := a.seat(actor)
	if err != nil {
		return 0, err
	}
	c, err := a.loadChart()
	if err != nil {
		return 0, err
	}
	for _, p := range positions {
		if below, err := c.Below(p, as.Position); err != nil || below {
			return domain.ManagerVoteWeight, err
		}
	}
	return domain.VoteWeight, nil
}

// InsightVotes lists the votes on every version of the insight id, oldest
// first, as reader (who must be able to recall it) sees them.
func (s *Store) InsightVotes(ctx context.Context, reader, id string) ([]domain.InsightVote, error) {
	versions, err := s.history(s.read(ctx), reader, id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(versions))
	for i, v := range versions {
		ids[i] = v.ID
	}
	var rows []insightVoteRow
	if err := s.read(ctx).Where("insight_id IN ?", ids).Order("at, voter").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("votes on %s: %w", id, err)
	}
	return mapRows(rows, insightVoteRow.toDomain), nil
}

// RateActivation is a person's word on how a run went: rating is
// "succeeded" or "failed". It overrides the run's own end and what its
// work became, and credits (again) the insights the run cited, now if the
// run has ended, else when it ends. Only a person above the run's worker,
// or the owner, rates it.
func (s *Store) RateActivation(ctx context.Context, actor, activation, rating, note string) (domain.RunOutcome, error) {
	if !slices.Contains(domain.RunRatings, rating) {
		return domain.RunOutcome{}, domain.EnumError("outcome", "rating", rating, domain.RunRatings)
	}
	o := domain.RunOutcome{Activation: activation, Outcome: domain.OutcomeHelped, Source: domain.SourceRating, By: actor, Note: note}
	if rating == "failed" {
		o.Outcome = domain.OutcomeFailed
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		var run activationRow
		if err := tx.Select("id", "worker_id").Where("id = ?", activation).Take(&run).Error; err != nil {
			return notFoundOr(err, "activation", activation)
		}
		var err error
		if err = isPerson(tx, actor, "rates a run"); err != nil {
			return err
		}
		if err := newAuthz(tx).manages(actor, run.WorkerID); err != nil {
			return domain.Forbidden("%s is a run of %s; only a person above %s, or %s, rates it", activation, run.WorkerID, run.WorkerID, domain.OwnerWorker)
		}
		o.At = s.Now()
		if err := s.judgeRunTx(tx, o); err != nil {
			return err
		}
		if o.Proposed, err = s.proposeRunTx(tx, run, o); err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "rate_activation", Actor: actor, Target: activation, After: map[string]any{"outcome": rating, "note": note}})
	})
	if err != nil {
		return domain.RunOutcome{}, fmt.Errorf("rate %s: %w", activation, err)
	}
	return o, nil
}

// RunOutcome is the outcome that credits what a run cited, if it has one.
func (s *Store) RunOutcome(ctx context.Context, activation string) (domain.RunOutcome, error) {
	var r runOutcomeRow
	if err := s.read(ctx).Where("activation_id = ?", activation).Take(&r).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return domain.RunOutcome{}, domain.NotFound("outcome of activation", activation)
		}
		return domain.RunOutcome{}, fmt.Errorf("outcome of %s: %w", activation, err)
	}
	return r.toDomain(), nil
}

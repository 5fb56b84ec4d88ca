package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// ShowInsights records insights as shown to a run (put in its prompt or
// returned by its recall), counting each injected once per run.
func (s *Store) ShowInsights(ctx context.Context, activation string, ids []string) error {
	return s.write(ctx, func(tx *gorm.DB) error {
		for _, id := range ids {
			if _, err := s.use(tx, activation, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// use returns the run's use of an insight, creating it (and counting the
// insight injected) on first sight.
func (s *Store) use(tx *gorm.DB, activation, id string) (insightUseRow, error) {
	u := insightUseRow{ActivationID: activation, InsightID: id, CreatedAt: s.Now()}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&u)
	if res.Error != nil {
		return u, fmt.Errorf("record insight %s shown to %s: %w", id, activation, res.Error)
	}
	if res.RowsAffected == 0 {
		return u, tx.Where("activation_id = ? AND insight_id = ?", activation, id).Take(&u).Error
	}
	return u, tx.Model(&insightRow{}).Where("id = ?", id).Update("injected", gorm.Expr("injected + 1")).Error
}

// InsightFeedback records feedback on insights as actor, who must be able
// to recall each. In a run (activation) the only word is utilized: the run
// cites them, and its one outcome (its end, or what its work became)
// credits them; an agent's own say on how advice did is never taken.
// Outside a run a person votes helped or failed (InsightVote), with note
// saying why; an AI worker cannot.
func (s *Store) InsightFeedback(ctx context.Context, actor, activation string, ids []string, o domain.InsightOutcome, note string) error {
	if err := o.Validate("outcome"); err != nil {
		return err
	}
	if len(ids) == 0 {
		return domain.Invalid("ids", "name at least one insight (i-…)")
	}
	switch {
	case activation != "" && o != domain.OutcomeUtilized:
		return domain.Invalid("outcome", "in a run the valid outcome is %q: cite the insights you used, and the run's outcome (how it ends, or what its work becomes) credits them; got %q",
			domain.OutcomeUtilized, o)
	case activation == "" && o == domain.OutcomeUtilized:
		return domain.Invalid("outcome", "%q cites insights for a run's outcome, and this call is in no run; outside a run a person votes %q or %q",
			o, domain.OutcomeHelped, domain.OutcomeFailed)
	}
	return s.write(ctx, func(tx *gorm.DB) error {
		a := newAuthz(tx)
		if activation == "" {
			if err := isPerson(tx, actor, "votes on an insight outside a run (helped or failed); an AI worker's runs cite what they use (utilized) and their outcome credits it"); err != nil {
				return err
			}
		}
		for _, id := range ids {
			in, err := getInsight(tx, id)
			if err != nil {
				return err
			}
			if activation == "" {
				err = s.voteTx(tx, a, actor, in, o, note)
			} else if err = a.seesInsight(actor, in); err == nil {
				err = s.citeTx(tx, activation, id)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// citeTx marks an insight utilized by a run, once.
func (s *Store) citeTx(tx *gorm.DB, activation, id string) error {
	u, err := s.use(tx, activation, id)
	if err != nil || u.Utilized {
		return err
	}
	if err := tx.Model(&u).Where("activation_id = ? AND insight_id = ?", activation, id).Update("utilized", true).Error; err != nil {
		return err
	}
	return tx.Model(&insightRow{}).Where("id = ?", id).Updates(map[string]any{"utilized": gorm.Expr("utilized + 1"), "last_used": s.Now()}).Error
}

// storesIn says whether actor may store an insight in scope: anyone in
// the org's; its own role, position or self, or those below it.
func (a *authz) storesIn(actor string, sc domain.InsightScope, target string) error {
	if err := a.targetExists(sc, target); err != nil || sc == domain.ScopeOrg || actor == "" || actor == domain.OwnerWorker {
		return err
	}
	if sc == domain.ScopeWorker {
		if target == actor {
			return nil
		}
		return a.manages(actor, target)
	}
	as, err := a.seat(actor)
	if err != nil {
		return err
	}
	positions := []string{target}
	if sc == domain.ScopeRole {
		positions = nil
		if err := a.tx.Model(&positionRow{}).Where("role_id = ?", target).Pluck("id", &positions).Error; err != nil {
			return err
		}
	}
	c, err := a.loadChart()
	if err != nil {
		return err
	}
	for _, p := range positions {
		if below, err := c.Below(p, as.Position); err != nil || below || p == as.Position {
			return err
		}
	}
	return domain.Forbidden("%s may store insights only for its own %s or those below it; %s is not, so %s cannot store there; %s can",
		actor, sc, target, actor, domain.OwnerWorker)
}

func (a *authz) targetExists(sc domain.InsightScope, target string) error {
	model, kind := map[domain.InsightScope]any{domain.ScopeRole: &roleRow{}, domain.ScopePosition: &positionRow{}, domain.ScopeWorker: &workerRow{}}[sc], string(sc)
	if model == nil {
		return nil
	}
	ok, err := exists(a.tx, model, target)
	if err == nil && !ok {
		err = domain.NotFound(kind, target)
	}
	return err
}

// corrects says whether actor may correct in: its author, a worker above
// the author, or the owner.
func (a *authz) corrects(actor string, in domain.Insight) error {
	if actor == "" || actor == domain.OwnerWorker || actor == in.StoredBy {
		return nil
	}
	if err := a.manages(actor, in.StoredBy); err != nil {
		return domain.Forbidden("%s was stored by %s; only its author, a worker above it or %s may correct it", in.ID, in.StoredBy, domain.OwnerWorker)
	}
	return nil
}

// seesInsight says whether reader may recall in (the owner sees all).
func (a *authz) seesInsight(reader string, in domain.Insight) error {
	if reader != "" && !in.Label.Within([]string{reader}) {
		return domain.Forbidden("%s was stored by a run that read what only %s may read, which %s is not among", in.ID, strings.Join(in.Label.Readers, ", "), reader)
	}
	if reader == "" || reader == domain.OwnerWorker {
		return nil
	}
	seat, err := insightSeat(a.tx, reader)
	if err != nil {
		return err
	}
	if !seat.Sees(in.Scope, in.Target) {
		return domain.Forbidden("%s is scoped to %s %s, which %s does not belong to", in.ID, in.Scope, in.Target, reader)
	}
	return nil
}

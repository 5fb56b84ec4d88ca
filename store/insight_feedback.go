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

// InsightFeedback records an outcome for insights, as actor, who must be
// able to recall each. Utilized, in a run, marks them used by it: the
// run's outcome (FinishInsightRun) then credits them. Helped and failed
// credit them now, and their led_to ancestors by the decayed amount.
func (s *Store) InsightFeedback(ctx context.Context, actor, activation string, ids []string, o domain.InsightOutcome) error {
	if err := o.Validate("outcome"); err != nil {
		return err
	}
	if len(ids) == 0 {
		return domain.Invalid("ids", "name at least one insight (i-…)")
	}
	return s.write(ctx, func(tx *gorm.DB) error {
		a := newAuthz(tx)
		for _, id := range ids {
			in, err := getInsight(tx, id)
			if err != nil {
				return err
			}
			if err := a.seesInsight(actor, in); err != nil {
				return err
			}
			if err := s.feedback(tx, activation, id, o); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) feedback(tx *gorm.DB, activation, id string, o domain.InsightOutcome) error {
	var u insightUseRow
	if activation != "" {
		var err error
		if u, err = s.use(tx, activation, id); err != nil {
			return err
		}
	}
	if o == domain.OutcomeUtilized {
		if activation != "" && u.Utilized {
			return nil
		}
		if activation != "" {
			if err := tx.Model(&u).Where("activation_id = ? AND insight_id = ?", activation, id).Update("utilized", true).Error; err != nil {
				return err
			}
		}
		return tx.Model(&insightRow{}).Where("id = ?", id).Updates(map[string]any{"utilized": gorm.Expr("utilized + 1"), "last_used": s.Now()}).Error
	}
	if activation != "" {
		if u.Credited != "" {
			return nil
		}
		if err := tx.Model(&u).Where("activation_id = ? AND insight_id = ?", activation, id).Update("credited", string(o)).Error; err != nil {
			return err
		}
	}
	return credit(tx, id, o)
}

// creditRunTx credits a finished run's result to the insights it cited as
// utilized and were not credited yet: succeeded helped, failed failed; an
// interrupted run says nothing, and insights it was only shown get
// nothing. It returns how many were credited.
func creditRunTx(tx *gorm.DB, a domain.Activation) (int, error) {
	o := domain.OutcomeHelped
	switch a.Status {
	case domain.ActivationSucceeded:
	case domain.ActivationFailed:
		o = domain.OutcomeFailed
	default:
		return 0, nil
	}
	var uses []insightUseRow
	if err := tx.Where("activation_id = ? AND utilized AND credited = ''", a.ID).Find(&uses).Error; err != nil {
		return 0, fmt.Errorf("insights used by %s: %w", a.ID, err)
	}
	for _, u := range uses {
		if err := tx.Model(&u).Where("activation_id = ? AND insight_id = ?", a.ID, u.InsightID).Update("credited", string(o)).Error; err != nil {
			return 0, err
		}
		if err := credit(tx, u.InsightID, o); err != nil {
			return 0, err
		}
	}
	return len(uses), nil
}

// credit applies an outcome of id to it and its led_to ancestors.
func credit(tx *gorm.DB, id string, o domain.InsightOutcome) error {
	depths, err := domain.CreditDepths(id, func(x string) ([]string, error) {
		var ps []string
		err := tx.Model(&insightLinkRow{}).Where("to_id = ? AND kind = ?", x, string(domain.LinkLedTo)).Order("from_id").Pluck("from_id", &ps).Error
		return ps, err
	})
	if err != nil {
		return fmt.Errorf("credit %s: %w", id, err)
	}
	for x, d := range depths {
		var r insightRow
		if err := tx.Where("id = ?", x).Take(&r).Error; err != nil {
			return notFoundOr(err, "insight", x)
		}
		st := r.toDomain().Stats
		st.Credit(o, d)
		if err := tx.Model(&insightRow{}).Where("id = ?", x).Updates(map[string]any{"helped": st.Helped, "failed": st.Failed,
			"credit_helped": st.CreditHelped, "credit_failed": st.CreditFailed}).Error; err != nil {
			return err
		}
	}
	return nil
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

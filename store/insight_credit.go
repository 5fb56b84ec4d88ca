package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// The credit ledger. Every outcome that moves an insight's effectiveness
// is a row: a run's one outcome, shared by each insight the run cited
// (and, decayed, by the insights that led to them), or a person's vote.
// An insight's credit counters are the fold of its rows in order, so when
// a run's outcome is overridden later (its item accepted, its approval
// denied, a person's rating) its rows are replaced and its insights
// folded again: nothing counts twice, and nothing is lost. The fold
// reads each shared outcome in hindsight, by what is known now of the
// others the run cited (restatTx).
type insightCreditRow struct {
	ID int64 `gorm:"primaryKey;autoIncrement"`
	// Source is the run (a-…), a vote ("vote:" + the voter), or what the
	// insight carried before the ledger ("before") or was given as a prior.
	Source    string `gorm:"not null;index"`
	InsightID string `gorm:"not null;index"`
	// Cited is the insight the run cited or the vote is on; InsightID is
	// it or an insight that led to it.
	Cited   string  `gorm:"not null"`
	Outcome string  `gorm:"not null"`
	Weight  float64 `gorm:"not null"`
	// Count is how many direct outcomes the row is (the baseline's
	// counters): 1 for the cited insight's own, 0 for an ancestor's share.
	Count int `gorm:"not null"`
	At    time.Time
}

func (insightCreditRow) TableName() string { return "insight_credits" }

// runOutcomeRow is a run's one outcome, from its strongest source so far.
type runOutcomeRow struct {
	ActivationID string `gorm:"primaryKey"`
	Outcome      string `gorm:"not null"`
	Source       string `gorm:"not null"`
	By           string `gorm:"not null"`
	Note         string `gorm:"not null"`
	At           time.Time
}

func (runOutcomeRow) TableName() string { return "run_outcomes" }

func (r runOutcomeRow) toDomain() domain.RunOutcome {
	return domain.RunOutcome{Activation: r.ActivationID, Outcome: domain.InsightOutcome(r.Outcome), Source: domain.OutcomeSource(r.Source),
		By: r.By, Note: r.Note, At: r.At.UTC()}
}

// insightVoteRow is one person's vote on one insight outside a run.
type insightVoteRow struct {
	InsightID string  `gorm:"primaryKey"`
	Voter     string  `gorm:"primaryKey"`
	Outcome   string  `gorm:"not null"`
	Weight    float64 `gorm:"not null"`
	Note      string  `gorm:"not null"`
	At        time.Time
}

func (insightVoteRow) TableName() string { return "insight_votes" }

func (r insightVoteRow) toDomain() domain.InsightVote {
	return domain.InsightVote{Insight: r.InsightID, Voter: r.Voter, Outcome: domain.InsightOutcome(r.Outcome), Weight: r.Weight, Note: r.Note, At: r.At.UTC()}
}

const (
	sourceBefore = "before"
	sourcePrior  = "prior"
	votePrefix   = "vote:"
)

// migrateCredit adds the ledger, run outcomes and votes, and carries each
// insight's counters into the ledger as it had them, so folding it again
// later starts from what it had earned.
func migrateCredit(tx *gorm.DB) error {
	if err := autoMigrate(tx, &insightCreditRow{}, &runOutcomeRow{}, &insightVoteRow{}); err != nil {
		return err
	}
	var rows []insightRow
	if err := tx.Select("id", "helped", "failed", "credit_helped", "credit_failed", "created_at").
		Where("helped > 0 OR failed > 0 OR credit_helped > 0 OR credit_failed > 0").Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		for _, c := range beforeLedger(r) {
			if err := tx.Create(&c).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// beforeLedger is what an insight's counters hold, as ledger rows, for an
// insight that comes with them (older than the ledger, or imported).
func beforeLedger(r insightRow) []insightCreditRow {
	var out []insightCreditRow
	for _, c := range []insightCreditRow{
		{Outcome: string(domain.OutcomeHelped), Weight: r.CreditHelped, Count: r.Helped},
		{Outcome: string(domain.OutcomeFailed), Weight: r.CreditFailed, Count: r.Failed},
	} {
		if c.Weight != 0 || c.Count != 0 {
			c.Source, c.InsightID, c.Cited, c.At = sourceBefore, r.ID, r.ID, r.CreatedAt
			out = append(out, c)
		}
	}
	return out
}

// runOutcomeOf turns how a run ended into its own word on itself: none
// for a run that was interrupted or cancelled.
func runOutcomeOf(a domain.Activation) (domain.InsightOutcome, bool) {
	switch a.Status {
	case domain.ActivationSucceeded:
		return domain.OutcomeHelped, true
	case domain.ActivationFailed:
		return domain.OutcomeFailed, true
	}
	return "", false
}

// setRunOutcomeTx records o unless a stronger word on the run is there. It
// reports whether it changed the run's outcome.
func (s *Store) setRunOutcomeTx(tx *gorm.DB, o domain.RunOutcome) (bool, error) {
	var cur runOutcomeRow
	err := tx.Where("activation_id = ?", o.Activation).Take(&cur).Error
	switch {
	case err == nil && domain.OutcomeSource(cur.Source).Strength() > o.Source.Strength():
		return false, nil
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound):
		return false, fmt.Errorf("outcome of %s: %w", o.Activation, err)
	}
	if o.At.IsZero() {
		o.At = s.Now()
	}
	row := runOutcomeRow{ActivationID: o.Activation, Outcome: string(o.Outcome), Source: string(o.Source), By: o.By, Note: o.Note, At: o.At}
	if err := tx.Save(&row).Error; err != nil {
		return false, fmt.Errorf("record outcome of %s: %w", o.Activation, err)
	}
	return true, nil
}

// judgeRunTx records a word on a run from what its work became, and
// credits it at once when the run has ended (a running run's end credits
// it).
func (s *Store) judgeRunTx(tx *gorm.DB, o domain.RunOutcome) error {
	if o.Activation == "" {
		return nil
	}
	changed, err := s.setRunOutcomeTx(tx, o)
	if err != nil || !changed {
		return err
	}
	var status []string
	if err := tx.Model(&activationRow{}).Where("id = ?", o.Activation).Pluck("status", &status).Error; err != nil {
		return err
	}
	if len(status) == 0 || status[0] == string(domain.ActivationRunning) {
		return nil
	}
	return creditRunTx(tx, o.Activation)
}

// finishRunTx is a run's end: its own word on itself (unless a stronger
// one came while it ran), then the credit of what it cited.
func (s *Store) finishRunTx(tx *gorm.DB, a domain.Activation) error {
	if o, ok := runOutcomeOf(a); ok {
		if _, err := s.setRunOutcomeTx(tx, domain.RunOutcome{Activation: a.ID, Outcome: o, Source: domain.SourceRun, By: a.WorkerID, Note: a.Error}); err != nil {
			return err
		}
	}
	return creditRunTx(tx, a.ID)
}

// creditRunTx replaces a run's rows in the ledger by its current outcome,
// shared by the insights it cited as utilized: each cited insight gets its
// share (read again in hindsight at every fold), and the insights that led
// to it their decayed share of it as it was then; insights it was only
// shown get nothing. Every insight whose rows changed is folded again.
func creditRunTx(tx *gorm.DB, activation string) error {
	var touched []string
	if err := tx.Model(&insightCreditRow{}).Where("source = ?", activation).Distinct().Pluck("insight_id", &touched).Error; err != nil {
		return fmt.Errorf("credit of %s: %w", activation, err)
	}
	if err := unsettleTx(tx, "c.source = ?", activation); err != nil {
		return err
	}
	if err := tx.Where("source = ?", activation).Delete(&insightCreditRow{}).Error; err != nil {
		return err
	}
	var o runOutcomeRow
	err := tx.Where("activation_id = ?", activation).Take(&o).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	if err == nil {
		var cited []string
		if err := tx.Model(&insightUseRow{}).Where("activation_id = ? AND utilized", activation).Order("insight_id").Pluck("insight_id", &cited).Error; err != nil {
			return fmt.Errorf("insights cited by %s: %w", activation, err)
		}
		shares, err := outcomeShares(tx, cited, domain.InsightOutcome(o.Outcome))
		if err != nil {
			return err
		}
		for i, id := range cited {
			more, err := ledgerTx(tx, insightCreditRow{Source: activation, Cited: id, Outcome: o.Outcome, Weight: shares[i], At: o.At}, true)
			if err != nil {
				return err
			}
			touched = append(touched, more...)
		}
		if err := tx.Model(&insightUseRow{}).Where("activation_id = ? AND utilized", activation).Update("credited", o.Outcome).Error; err != nil {
			return err
		}
	}
	// In the order of their ids, so the same run folds the same way
	// every time (each reads those folded before it).
	slices.Sort(touched)
	return restatTx(tx, slices.Compact(touched)...)
}

// outcomeShares is each cited insight's share of the run's outcome
// (domain.OutcomeShares), read after the run's own rows are taken out.
func outcomeShares(tx *gorm.DB, cited []string, o domain.InsightOutcome) ([]float64, error) {
	if len(cited) > 1 {
		if err := restatTx(tx, cited...); err != nil {
			return nil, err
		}
	}
	stats := make([]domain.InsightStats, len(cited))
	for i, id := range cited {
		in, err := getInsight(tx, id)
		if err != nil {
			return nil, err
		}
		stats[i] = in.Stats
	}
	return domain.OutcomeShares(stats, o), nil
}

// ledgerTx adds the rows of one outcome of c.Cited: its own, weight 1 and
// one direct outcome, and with ancestors the decayed shares of the
// insights that led to it. It returns the insights it credited.
func ledgerTx(tx *gorm.DB, c insightCreditRow, ancestors bool) ([]string, error) {
	depths := map[string]int{c.Cited: 0}
	if ancestors {
		var err error
		depths, err = domain.CreditDepths(c.Cited, func(x string) ([]string, error) {
			var ps []string
			err := tx.Model(&insightLinkRow{}).Where("to_id = ? AND kind = ?", x, string(domain.LinkLedTo)).Order("from_id").Pluck("from_id", &ps).Error
			return ps, err
		})
		if err != nil {
			return nil, fmt.Errorf("credit %s: %w", c.Cited, err)
		}
	}
	var ids []string
	for x, d := range depths {
		row := c
		row.InsightID, row.Count = x, b2i(d == 0)
		if c.Weight == 0 {
			c.Weight = 1
		}
		row.Weight = c.Weight * domain.CreditWeight(d)
		if err := tx.Create(&row).Error; err != nil {
			return nil, fmt.Errorf("credit %s: %w", x, err)
		}
		ids = append(ids, x)
	}
	return ids, nil
}

// restatTx folds the ledger rows of each insight, in order, into its
// counters. An outcome of a run that cited others too counts as
// domain.OutcomeShare says given those others' counters now, not the
// share stored when it came in: a failure first laid on a suspect that
// has since proved sound comes back to this insight, and one beside
// advice since shown unsound is mostly excused. An insight is folded
// again whenever it is credited, so it catches up with its companions
// then; the counters recall reads stay stored, so recall pays nothing.
// The fold starts from the insight's settled prefix (insight_settle.go),
// so it costs the recent rows, not the whole history. The insights are
// folded one after another, each reading the counters of those before
// it as just folded, but their ledgers and companions are read at once:
// a run's end folds each insight it cited twice, and reading them one
// by one held the writer for most of the run's end.
func restatTx(tx *gorm.DB, ids ...string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	// In chunks, so a query's conditions stay well within SQLite's
	// expression depth; a later chunk reads the earlier ones' counters
	// as written, as one fold after another would.
	for chunk := range slices.Chunk(uniq, restatChunk) {
		if err := restatChunkTx(tx, chunk); err != nil {
			return err
		}
	}
	return nil
}

// restatChunk is the most insights restatTx reads at once.
const restatChunk = 64

func restatChunkTx(tx *gorm.DB, ids []string) error {
	cps, err := checkpointsTx(tx, ids)
	if err != nil {
		return err
	}
	t, err := tailsTx(tx, cps)
	if err != nil {
		return err
	}
	for _, cp := range cps {
		f := t.fold(cp)
		if err := settleTx(tx, cp.InsightID, f); err != nil {
			return err
		}
		st := f.end
		if err := tx.Model(&insightRow{}).Where("id = ?", cp.InsightID).Updates(map[string]any{"helped": st.Helped, "failed": st.Failed,
			"credit_helped": st.CreditHelped, "credit_failed": st.CreditFailed}).Error; err != nil {
			return err
		}
		t.counters[cp.InsightID] = domain.InsightStats{CreditHelped: st.CreditHelped, CreditFailed: st.CreditFailed}
	}
	return nil
}

// fold is an insight's ledger after its checkpoint, folded: the rows,
// the share each counted, the counters after each, and at the end.
type fold struct {
	rows    []creditEntry
	weights []float64
	after   []domain.InsightStats
	end     domain.InsightStats
}

// tails are the ledgers of some insights after their checkpoints, and
// for each run in them that cited more than one insight, what it cited
// and those insights' counters, as a fold reads its companions.
type tails struct {
	rows map[string][]creditEntry
	// cited is, for each run, the insights it cited, in the order of
	// their ids; counters their credit counters as they stand now.
	cited    map[string][]string
	counters map[string]domain.InsightStats
}

// fold folds cp's insight's tail from its checkpoint: a run's outcome
// it shared with others counts as domain.OutcomeShare says given their
// counters now.
func (t tails) fold(cp creditCheckpointRow) fold {
	rows := t.rows[cp.InsightID]
	f := fold{rows: rows, weights: make([]float64, len(rows)), after: make([]domain.InsightStats, len(rows)), end: cp.stats()}
	var others []domain.InsightStats
	for i, r := range rows {
		w := r.Weight
		if r.Count == 1 && len(t.cited[r.Source]) > 1 {
			others = others[:0]
			for _, x := range t.cited[r.Source] {
				if x != cp.InsightID {
					others = append(others, t.counters[x])
				}
			}
			w = domain.OutcomeShare(f.end, others, domain.InsightOutcome(r.Outcome))
		}
		f.end.Credit(domain.InsightOutcome(r.Outcome), w, r.Count)
		f.weights[i], f.after[i] = w, f.end
	}
	return f
}

// tailsTx reads the tails after cps, in two queries whatever their number.
func tailsTx(tx *gorm.DB, cps []creditCheckpointRow) (tails, error) {
	t := tails{rows: map[string][]creditEntry{}, cited: map[string][]string{}, counters: map[string]domain.InsightStats{}}
	// after matches each insight's rows past its checkpoint.
	var conds []string
	var args []any
	for _, cp := range cps {
		conds = append(conds, "(insight_id = ? AND id > ?)")
		args = append(args, cp.InsightID, cp.Through)
	}
	after := "(" + strings.Join(conds, " OR ") + ")"
	var rows []struct {
		InsightID, Source, Outcome string
		ID                         int64
		Weight                     float64
		Count                      int
	}
	if err := tx.Model(&insightCreditRow{}).Select("insight_id, id, source, outcome, weight, count").Where(after, args...).
		Order("insight_id, at, id").Scan(&rows).Error; err != nil {
		return t, fmt.Errorf("ledgers: %w", err)
	}
	for _, r := range rows {
		t.rows[r.InsightID] = append(t.rows[r.InsightID], creditEntry{ID: r.ID, Source: r.Source, Outcome: r.Outcome, Weight: r.Weight, Count: r.Count})
	}
	var cited []struct {
		Source, InsightID          string
		CreditHelped, CreditFailed float64
	}
	runs := tx.Model(&insightCreditRow{}).Select("source").Where(after+" AND count = 1 AND source LIKE ?", append(args, domain.PrefixActivation+"%")...)
	if err := tx.Table("insight_credits AS c").Select("c.source, c.insight_id, i.credit_helped, i.credit_failed").
		Joins("JOIN insights AS i ON i.id = c.insight_id").
		Where("c.count = 1 AND c.source IN (?)", runs).
		Order("c.source, c.insight_id").Scan(&cited).Error; err != nil {
		return t, fmt.Errorf("companions: %w", err)
	}
	for _, c := range cited {
		t.cited[c.Source] = append(t.cited[c.Source], c.InsightID)
		t.counters[c.InsightID] = domain.InsightStats{CreditHelped: c.CreditHelped, CreditFailed: c.CreditFailed}
	}
	return t, nil
}

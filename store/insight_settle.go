package store

import (
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// Settling. Folding an insight's whole ledger on every outcome costs its
// whole history, inside the write transaction every other write waits
// on: advice cited in ten thousand runs held the writer for seconds at
// each run's end. But an old outcome barely counts: each later outcome
// of weight w keeps creditMemory^w of it. So once the rows after it
// weigh settleWeight outcomes (0.8^32: under a thousandth left), or
// settleRows rows have come since, a row's hindsight share is fixed and
// it folds into the insight's checkpoint; later folds start there and
// read only the rows since. A row taken out of a settled prefix (a run
// judged again, a vote changed) drops the checkpoint, and the next fold
// reads the whole ledger once more.
const (
	settleWeight = 32
	settleRows   = 512
	// settleBatch is the fewest rows a checkpoint moves by, so it is
	// written once in many folds.
	settleBatch = 64
)

// creditCheckpointRow is an insight's ledger folded through row Through.
type creditCheckpointRow struct {
	InsightID    string `gorm:"primaryKey"`
	Through      int64  `gorm:"not null"`
	Helped       int    `gorm:"not null"`
	Failed       int    `gorm:"not null"`
	CreditHelped float64
	CreditFailed float64
}

func (creditCheckpointRow) TableName() string { return "insight_credit_checkpoints" }

func (c creditCheckpointRow) stats() domain.InsightStats {
	return domain.InsightStats{Helped: c.Helped, Failed: c.Failed, CreditHelped: c.CreditHelped, CreditFailed: c.CreditFailed}
}

// creditEntry is what a fold reads of a credit ledger row.
type creditEntry struct {
	ID      int64
	Source  string
	Outcome string
	Weight  float64
	Count   int
}

// checkpointsTx is each insight's checkpoint, or none (Through 0: fold
// it all), in the order of ids.
func checkpointsTx(tx *gorm.DB, ids []string) ([]creditCheckpointRow, error) {
	var found []creditCheckpointRow
	if err := tx.Where("insight_id IN ?", ids).Find(&found).Error; err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	by := make(map[string]creditCheckpointRow, len(found))
	for _, cp := range found {
		by[cp.InsightID] = cp
	}
	out := make([]creditCheckpointRow, len(ids))
	for i, id := range ids {
		cp, ok := by[id]
		if !ok {
			cp = creditCheckpointRow{InsightID: id}
		}
		out[i] = cp
	}
	return out, nil
}

// settleTx moves id's checkpoint past the rows of its fold that have
// settled. It moves only to a cut every row before which has a smaller
// id than every row after, since later folds read by id.
func settleTx(tx *gorm.DB, id string, f fold) error {
	rows, weights := f.rows, f.weights
	cut, later := 0, 0.0
	for i := len(rows) - 1; i >= 0; i-- {
		if later >= settleWeight || len(rows)-1-i >= settleRows {
			cut = i + 1
			break
		}
		later += weights[i]
	}
	if cut < settleBatch {
		return nil
	}
	minAfter := make([]int64, len(rows)+1)
	minAfter[len(rows)] = 1<<63 - 1
	for i := len(rows) - 1; i >= 0; i-- {
		minAfter[i] = min(minAfter[i+1], rows[i].ID)
	}
	var maxBefore, through int64
	ok := 0
	for i := range cut {
		maxBefore = max(maxBefore, rows[i].ID)
		if maxBefore < minAfter[i+1] {
			ok, through = i+1, maxBefore
		}
	}
	if ok < settleBatch {
		return nil
	}
	st := f.after[ok-1]
	cp := creditCheckpointRow{InsightID: id, Through: through, Helped: st.Helped, Failed: st.Failed, CreditHelped: st.CreditHelped, CreditFailed: st.CreditFailed}
	if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&cp).Error; err != nil {
		return fmt.Errorf("settle the ledger of %s: %w", id, err)
	}
	return nil
}

// unsettleTx drops the checkpoints that settled a ledger row about to be
// taken out (those matching cond on the ledger c), so the next fold of
// their insights reads the whole ledger without it.
func unsettleTx(tx *gorm.DB, cond string, args ...any) error {
	// From the rows (found by their source's index) to the checkpoints,
	// not the other way: a run's end must not visit every checkpoint.
	err := tx.Exec("DELETE FROM insight_credit_checkpoints WHERE insight_id IN (SELECT c.insight_id FROM insight_credits AS c"+
		" JOIN insight_credit_checkpoints AS k ON k.insight_id = c.insight_id WHERE c.id <= k.through AND "+cond+")", args...).Error
	if err != nil {
		return fmt.Errorf("unsettle: %w", err)
	}
	return nil
}

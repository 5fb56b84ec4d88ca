package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// inboxDismissalRow is one item a worker dismissed from its inbox: an
// event (a message or a notice) or a failed run, by id. The item itself
// stays where it is; only the inbox stops listing it.
type inboxDismissalRow struct {
	WorkerID    string `gorm:"primaryKey"`
	ItemID      string `gorm:"primaryKey"`
	DismissedAt time.Time
}

func (inboxDismissalRow) TableName() string { return "inbox_dismissals" }

// undismissed follows an id column: it leaves out what a worker (its one
// argument) dismissed.
const undismissed = " NOT IN (SELECT item_id FROM inbox_dismissals WHERE worker_id = ?)"

// DismissInboxItems records that worker dismissed these items; dismissing
// one twice changes nothing. The caller has checked each id names
// something worker may read.
func (s *Store) DismissInboxItems(ctx context.Context, worker string, ids []string) error {
	rows := make([]inboxDismissalRow, len(ids))
	for i, id := range ids {
		rows[i] = inboxDismissalRow{WorkerID: worker, ItemID: id, DismissedAt: s.Now()}
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
	})
	if err != nil {
		return fmt.Errorf("dismiss inbox items of %s: %w", worker, err)
	}
	return nil
}

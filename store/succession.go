package store

import (
	"errors"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// succeed subscribes a new hire to the streams the position's last
// dismissed worker followed (its DMs, logs, inbox and contact channel
// aside, and any since archived), so swapping who holds a position — an
// AI for a human or back — leaves the streams the workers around it talk
// on as they were.
func (s *Store) succeed(tx *gorm.DB, actor, worker, position string) error {
	var prev workerRow
	err := tx.Where("position_id = ? AND dismissed_at IS NOT NULL", position).Order("dismissed_at DESC").Take(&prev).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var streams []string
	err = tx.Model(&subscriptionRow{}).Joins("JOIN streams ON streams.id = subscriptions.stream_id").
		Where("subscriptions.worker_id = ? AND streams.archived_at IS NULL", prev.ID).Order("subscriptions.stream_id").Pluck("subscriptions.stream_id", &streams).Error
	if err != nil {
		return err
	}
	az := newAuthz(tx)
	for _, st := range streams {
		if personal(st) || az.reads(worker, st) != nil {
			continue
		}
		if err := tx.Create(&subscriptionRow{WorkerID: worker, StreamID: st, CreatedAt: s.Now()}).Error; err != nil {
			return err
		}
		if err := s.audit(tx, Change{Action: "subscribe", Actor: actor, Target: worker,
			After: map[string]string{"stream": st, "worker": worker, "succeeds": prev.ID}}); err != nil {
			return err
		}
	}
	return nil
}

// personal streams belong to one worker, not to its position: a
// successor never inherits them.
func personal(stream string) bool {
	kind, _ := domain.StreamKindOf(stream)
	return kind != domain.StreamShared && kind != domain.StreamTask
}

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Tool results and tasks are kept for the worker that made them until
// they expire; these two read and write either table.

// putKept stores row, first removing its table's expired rows (model is
// the table's row type), so the table holds only what can still be read.
func (s *Store) putKept(ctx context.Context, model, row any, now time.Time) error {
	return s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("expires_at <= ?", now).Delete(model).Error; err != nil {
			return err
		}
		return tx.Create(row).Error
	})
}

// getKept reads into row the unexpired one with id kept for worker.
// Another worker's, and an expired one, are not found (what names it):
// their existence is not disclosed.
func (s *Store) getKept(ctx context.Context, row any, what, worker, id string) error {
	err := s.db.WithContext(ctx).Where("id = ? AND worker_id = ? AND expires_at > ?", id, worker, s.Now()).Take(row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.NotFound(what, id)
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", what, id, err)
	}
	return nil
}

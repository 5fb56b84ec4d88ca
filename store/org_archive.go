package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// archivedKey marks an org archived, with the time it was. It lives in
// the settings table, though no `config` command names it, so that a
// running server sees an archive or a restore made by the CLI on its
// next read of the settings epoch, as it sees any `config set`
// (epoch_cache.go).
const archivedKey = "org.archived_at"

// Archived is when the org in this database was archived, and whether
// it is.
func (s *Store) Archived(ctx context.Context) (time.Time, bool, error) {
	v, ok, err := s.storedSetting(ctx, archivedKey)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read %s: %q is not a time: %w", archivedKey, v, err)
	}
	return at, true, nil
}

// Archive marks the org archived now; an org already archived is an
// ErrConflict naming when. Nothing else in the database changes.
func (s *Store) Archive(ctx context.Context) (time.Time, error) {
	at := s.Now().UTC()
	err := s.write(ctx, func(tx *gorm.DB) error {
		var row settingRow
		err := tx.Where("key = ?", archivedKey).Take(&row).Error
		if err == nil {
			return fmt.Errorf("%w: it has been archived since %s", domain.ErrConflict, row.Value)
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		return tx.Create(&settingRow{Key: archivedKey, Value: at.Format(time.RFC3339Nano), UpdatedAt: at}).Error
	})
	s.settings.clear()
	if err != nil {
		return time.Time{}, fmt.Errorf("archive: %w", err)
	}
	return at, nil
}

// Restore clears the archive mark; an org not archived is an
// ErrConflict.
func (s *Store) Restore(ctx context.Context) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Where("key = ?", archivedKey).Delete(&settingRow{})
		if res.Error == nil && res.RowsAffected == 0 {
			return fmt.Errorf("%w: it is not archived", domain.ErrConflict)
		}
		return res.Error
	})
	s.settings.clear()
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

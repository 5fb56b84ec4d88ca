package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// archivedNote is the last error of a delivery archiving parked.
const archivedNote = "the stream is archived"

// archivedChange is what the audit of an archive_stream records besides the
// stream: who followed it then, and how many deliveries were parked.
type archivedChange struct {
	domain.Stream
	Members []string `json:"members"`
	Parked  int64    `json:"parkedDeliveries"`
}

// ArchiveStream retires a stream the actor may change (updatesStream),
// keeping it and its history: from then on it takes no event (appendOnce)
// and no new member (Subscribe), and sends nothing: in the same
// transaction its pending deliveries are parked as disabled, where
// list_deliveries shows them, and none is sent again. Its members stay,
// so a private stream keeps its readers, and nothing new arrives to wake
// them; its history is read without following it (ReadableStreams).
// Archiving an archived stream returns it as it is, unaudited.
func (s *Store) ArchiveStream(ctx context.Context, actor, id string) (domain.Stream, error) {
	if err := systemStream(id, "archive"); err != nil {
		return domain.Stream{}, err
	}
	var row streamRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "stream", id)
		}
		if err := s.updatesStream(tx, actor, "archive", row); err != nil || row.ArchivedAt != nil {
			return err
		}
		before := row
		if err := tx.Model(&streamRow{}).Where("id = ?", id).Update("archived_at", s.Now()).Error; err != nil {
			return err
		}
		// Read back, so this answer's archivedAt is every later read's (a
		// database may keep less of the time than it was given).
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		after := archivedChange{Stream: s.stream(row), Members: []string{}}
		var err error
		if after.Parked, err = s.parkDeliveries(tx, id); err != nil {
			return err
		}
		if err := tx.Model(&subscriptionRow{}).Where("stream_id = ?", id).Order("worker_id").Pluck("worker_id", &after.Members).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "archive_stream", Actor: actor, Target: id, Before: s.stream(before), After: after})
	})
	if err != nil {
		return domain.Stream{}, fmt.Errorf("archive stream %s: %w", id, err)
	}
	return s.stream(row), nil
}

// parkDeliveries disables the stream's pending deliveries, saying it is
// archived: they are never sent, and stay listed with why.
func (s *Store) parkDeliveries(tx *gorm.DB, stream string) (int64, error) {
	res := tx.Model(&deliveryRow{}).Where("stream_id = ? AND status = ?", stream, string(domain.DeliveryPending)).
		Updates(map[string]any{"status": string(domain.DeliveryDisabled), "last_error": archivedNote, "updated_at": s.Now()})
	return res.RowsAffected, res.Error
}

// onArchived says whether delivery id is of a stream archived since.
func onArchived(tx *gorm.DB, id int64) (bool, error) {
	var n int64
	err := tx.Model(&deliveryRow{}).Joins("JOIN streams ON streams.id = deliveries.stream_id").
		Where("deliveries.id = ? AND streams.archived_at IS NOT NULL", id).Count(&n).Error
	return n > 0, err
}

// inUse refuses stream id, named by field, once it is archived: a
// processor reads nothing from it any more.
func inUse(tx *gorm.DB, field, id string) error {
	var st streamRow
	if err := tx.Select("id", "archived_at").Where("id = ?", id).Take(&st).Error; err != nil {
		return notFoundOr(err, "stream", id)
	}
	if st.ArchivedAt != nil {
		return domain.StreamArchived(field, id)
	}
	return nil
}

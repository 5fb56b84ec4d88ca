package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// RetryDelivery sends a delivery that was given up again, once its cause
// is fixed (a stream's outbound_url corrected, private addresses allowed):
// it is pending and due now, its log kept and its next attempt numbered
// after the earlier ones, with a fresh budget of attempts, as a newly
// published event would get, so that a passing failure on the way does
// not give it up at once. A failed delivery may be retried, and a
// disabled one once its stream's endpoint is enabled again, as the
// operator's own choice (EnableEndpoint does not resend them by itself);
// none while its stream's endpoint is disabled, since that remote asked
// to stop, nor once its stream is archived. A pending or delivered one is
// ErrConflict: retrying it would send it twice.
func (s *Store) RetryDelivery(ctx context.Context, actor string, id int64) (domain.Delivery, error) {
	var row deliveryRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return domain.ErrNotFound
			}
			return err
		}
		if err := retryable(tx, row); err != nil {
			return err
		}
		before := map[string]any{"delivery": row.ID, "event": row.EventID, "status": row.Status, "attempts": row.Attempts, "lastError": row.LastError}
		if err := s.requeue(tx, []int64{row.ID}, row.Status); err != nil {
			return err
		}
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "retry_delivery", Actor: actor, Target: row.StreamID, Before: before,
			After: map[string]any{"delivery": row.ID, "status": row.Status}})
	})
	if err != nil {
		return domain.Delivery{}, fmt.Errorf("delivery %d: %w", id, err)
	}
	return row.toDomain(), nil
}

// RetryFailedDeliveries is RetryDelivery for the failed deliveries of a
// stream, up to limit of them (MaxReadLimit at most), oldest first; none
// failed is no error. A call again takes the next ones.
func (s *Store) RetryFailedDeliveries(ctx context.Context, actor, stream string, limit int) ([]domain.Delivery, error) {
	if limit <= 0 || limit > MaxReadLimit {
		limit = MaxReadLimit
	}
	var rows []deliveryRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := endpointEnabled(tx, stream); err != nil {
			return err
		}
		var ids []int64
		err := tx.Model(&deliveryRow{}).Where("stream_id = ? AND status = ?", stream, string(domain.DeliveryFailed)).
			Order("id").Limit(limit).Pluck("id", &ids).Error
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := s.requeue(tx, ids, string(domain.DeliveryFailed)); err != nil {
			return err
		}
		if err := tx.Where("id IN ?", ids).Order("id").Find(&rows).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "retry_delivery", Actor: actor, Target: stream,
			Before: map[string]any{"deliveries": ids, "status": string(domain.DeliveryFailed)},
			After:  map[string]any{"deliveries": ids, "status": string(domain.DeliveryPending)}})
	})
	if err != nil {
		return nil, fmt.Errorf("retry failed deliveries of %s: %w", stream, err)
	}
	return mapRows(rows, deliveryRow.toDomain), nil
}

// retryable says why a delivery may not be sent again, or nil.
func retryable(tx *gorm.DB, row deliveryRow) error {
	switch domain.DeliveryStatus(row.Status) {
	case domain.DeliveryDelivered:
		return domain.Conflict("it was delivered (attempt %d); sending it again would deliver it twice", row.Attempts)
	case domain.DeliveryPending:
		return domain.Conflict("it is pending already: the outbox sends it when it is due")
	}
	return endpointEnabled(tx, row.StreamID)
}

// endpointEnabled refuses a stream that sends nothing more: one archived,
// or whose remote answered 410 Gone.
func endpointEnabled(tx *gorm.DB, stream string) error {
	var n int64
	if err := tx.Model(&streamRow{}).Where("id = ? AND archived_at IS NOT NULL", stream).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return domain.Conflict("stream %s is archived: it sends nothing more, and what it had not sent stays unsent", stream)
	}
	if err := tx.Model(&disabledEndpointRow{}).Where("stream_id = ?", stream).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return domain.Conflict("stream %s's endpoint is disabled (its remote answered 410 Gone); enable_endpoint %s first", stream, stream)
	}
	return nil
}

// requeue makes the deliveries ids, each still in status from, pending
// and due now with a fresh budget of attempts. A delivery that left that
// status meanwhile (another server's retry) is ErrConflict.
func (s *Store) requeue(tx *gorm.DB, ids []int64, from string) error {
	now := s.Now()
	res := tx.Model(&deliveryRow{}).Where("id IN ? AND status = ?", ids, from).
		Updates(map[string]any{"status": string(domain.DeliveryPending), "next_attempt_ns": now.UnixNano(),
			"retried_after": gorm.Expr("attempts"), "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ids)) {
		return domain.Conflict("a delivery changed meanwhile; list_deliveries shows it now")
	}
	return nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// deliveryRow is one event on its way out through a transport. The next
// attempt time is stored as Unix nanoseconds so due-queries compare
// integers, not SQLite's text timestamps.
type deliveryRow struct {
	ID            int64  `gorm:"primaryKey;autoIncrement"`
	EventID       string `gorm:"not null;uniqueIndex:idx_delivery_event_kind,priority:1"`
	Kind          string `gorm:"not null;uniqueIndex:idx_delivery_event_kind,priority:2"`
	EventSeq      int64  `gorm:"not null"`
	StreamID      string `gorm:"not null;index;index:idx_delivery_remote,priority:1"`
	Status        string `gorm:"not null;index:idx_delivery_due,priority:1"`
	NextAttemptNs int64  `gorm:"not null;index:idx_delivery_due,priority:2"`
	Attempts      int    `gorm:"not null"`
	// RetriedAfter is Attempts when an operator last retried the delivery.
	RetriedAfter int `gorm:"not null;default:0"`
	LastStatus   int
	LastError    string
	// RemoteID is the remote's id of the delivered message (Slack's ts,
	// Telegram's message_id): a chat answer names it (relayAnswer).
	RemoteID  string `gorm:"index:idx_delivery_remote,priority:2"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (deliveryRow) TableName() string { return "deliveries" }

func (r deliveryRow) toDomain() domain.Delivery {
	d := domain.Delivery{ID: r.ID, EventID: r.EventID, EventSeq: r.EventSeq, StreamID: r.StreamID, Kind: domain.TransportKind(r.Kind),
		Status: domain.DeliveryStatus(r.Status), Attempts: r.Attempts, RetriedAfter: r.RetriedAfter, LastStatus: r.LastStatus, LastError: r.LastError,
		RemoteID: r.RemoteID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.Status == string(domain.DeliveryPending) {
		t := time.Unix(0, r.NextAttemptNs).UTC()
		d.NextAttemptAt = &t
	}
	return d
}

type deliveryAttemptRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	DeliveryID int64 `gorm:"not null;index"`
	Attempt    int   `gorm:"not null"`
	StartedAt  time.Time
	DurationNs int64
	Status     int
	Error      string
}

func (deliveryAttemptRow) TableName() string { return "delivery_attempts" }

func (r deliveryAttemptRow) toDomain() domain.DeliveryAttempt {
	return domain.DeliveryAttempt{Attempt: r.Attempt, StartedAt: r.StartedAt.UTC(), Duration: time.Duration(r.DurationNs), Status: r.Status, Error: r.Error}
}

// deliveryCursorRow is how far an engine has read the event log.
type deliveryCursorRow struct {
	Name string `gorm:"primaryKey"`
	Seq  int64  `gorm:"not null"`
}

func (deliveryCursorRow) TableName() string { return "delivery_cursors" }

// disabledEndpointRow marks a stream whose remote asked to stop (HTTP 410).
type disabledEndpointRow struct {
	StreamID  string `gorm:"primaryKey"`
	Reason    string
	CreatedAt time.Time
}

func (disabledEndpointRow) TableName() string { return "disabled_endpoints" }

// OutboundEvents returns events published by workers (Source set) on
// streams of the given kinds with since < seq <= upTo, oldest first, and
// upTo: the log's last sequence number when the read began. A caller may
// move its cursor to upTo once it has handled every returned event and
// fewer than limit came back, so events nobody sends are never rescanned.
func (s *Store) OutboundEvents(ctx context.Context, kinds []domain.TransportKind, since int64, limit int) (evs []domain.Event, upTo int64, err error) {
	// Sequence numbers are assigned under SQLite's single writer lock, so
	// every event at or below the committed maximum is already visible.
	if upTo, err = s.LastSeq(ctx); err != nil {
		return nil, 0, fmt.Errorf("outbound events: %w", err)
	}
	if len(kinds) == 0 || upTo <= since {
		return nil, upTo, nil
	}
	var rows []eventRow
	err = s.read(ctx).Model(&eventRow{}).Select("events.*").Joins("JOIN streams ON streams.id = events.stream_id").
		Where("streams.transport_kind IN ? AND events.source <> '' AND events.seq > ? AND events.seq <= ?", kindStrings(kinds), since, upTo).
		Order("events.seq ASC").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("outbound events: %w", err)
	}
	for _, r := range rows {
		ev, err := r.toDomain()
		if err != nil {
			return nil, 0, err
		}
		evs = append(evs, ev)
	}
	return evs, upTo, nil
}

func kindStrings(kinds []domain.TransportKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// DeliveryCursor returns the named cursor, 0 when it was never stored.
func (s *Store) DeliveryCursor(ctx context.Context, name string) (int64, error) {
	var rows []deliveryCursorRow
	if err := s.read(ctx).Where("name = ?", name).Limit(1).Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("delivery cursor %s: %w", name, err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[0].Seq, nil
}

// EnqueueDeliveries records deliveries (due now, or disabled when their
// stream's endpoint is, or their stream archived since the event) and
// moves the cursor, in one transaction. A delivery that already exists
// for its event and kind is left as it is, so re-reading the log after a
// crash adds nothing twice.
func (s *Store) EnqueueDeliveries(ctx context.Context, cursor string, seq int64, ds []domain.Delivery) error {
	now := s.Now()
	err := s.write(ctx, func(tx *gorm.DB) error {
		var disabled, archived []string
		if err := tx.Model(&disabledEndpointRow{}).Pluck("stream_id", &disabled).Error; err != nil {
			return err
		}
		if err := tx.Model(&streamRow{}).Where("archived_at IS NOT NULL").Pluck("id", &archived).Error; err != nil {
			return err
		}
		for _, d := range ds {
			row := deliveryRow{EventID: d.EventID, Kind: string(d.Kind), EventSeq: d.EventSeq, StreamID: d.StreamID,
				Status: string(domain.DeliveryPending), NextAttemptNs: now.UnixNano(), CreatedAt: now, UpdatedAt: now}
			switch {
			case slices.Contains(archived, d.StreamID):
				row.Status, row.LastError = string(domain.DeliveryDisabled), archivedNote
			case slices.Contains(disabled, d.StreamID):
				row.Status, row.LastError = string(domain.DeliveryDisabled), "the stream's endpoint is disabled"
			}
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
				return err
			}
		}
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&deliveryCursorRow{Name: cursor, Seq: seq}).Error
	})
	if err != nil {
		return fmt.Errorf("enqueue deliveries: %w", err)
	}
	return nil
}

// DueDeliveries returns pending deliveries of the given kinds whose next
// attempt is at or before now, earliest first.
func (s *Store) DueDeliveries(ctx context.Context, kinds []domain.TransportKind, now time.Time, limit int) ([]domain.Delivery, error) {
	var rows []deliveryRow
	err := s.read(ctx).Where("status = ? AND next_attempt_ns <= ? AND kind IN ?", string(domain.DeliveryPending), now.UnixNano(), kindStrings(kinds)).
		Order("next_attempt_ns, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return mapRows(rows, deliveryRow.toDomain), nil
}

// NextDeliveryAt returns when the earliest pending delivery of the given
// kinds is due; ok is false when none is pending.
func (s *Store) NextDeliveryAt(ctx context.Context, kinds []domain.TransportKind) (at time.Time, ok bool, err error) {
	var next *int64
	err = s.read(ctx).Model(&deliveryRow{}).Where("status = ? AND kind IN ?", string(domain.DeliveryPending), kindStrings(kinds)).
		Select("MIN(next_attempt_ns)").Scan(&next).Error
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next delivery: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return time.Unix(0, *next).UTC(), true, nil
}

// ClaimDelivery starts an attempt: it counts it and pushes the next
// attempt to lease, so an attempt cut short by a crash is retried then,
// and nobody else picks the delivery meanwhile. It fails with ErrConflict
// when the delivery is no longer pending and due at now.
func (s *Store) ClaimDelivery(ctx context.Context, id int64, now, lease time.Time) (domain.Delivery, error) {
	var row deliveryRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&deliveryRow{}).Where("id = ? AND status = ? AND next_attempt_ns <= ?", id, string(domain.DeliveryPending), now.UnixNano()).
			Updates(map[string]any{"attempts": gorm.Expr("attempts + 1"), "next_attempt_ns": lease.UnixNano(), "updated_at": s.Now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("delivery %d is not due: %w", id, domain.ErrConflict)
		}
		return tx.Where("id = ?", id).Take(&row).Error
	})
	if err != nil {
		return domain.Delivery{}, fmt.Errorf("claim delivery: %w", err)
	}
	return row.toDomain(), nil
}

// DeliveryResult is how an attempt ended.
type DeliveryResult struct {
	Attempt domain.DeliveryAttempt
	// Status is the delivery's new status.
	Status domain.DeliveryStatus
	// NextAttemptAt is when a still-pending delivery is tried again.
	NextAttemptAt time.Time
	// DisableStream stops every pending and later delivery on the stream.
	DisableStream bool
	// RemoteID is the remote's id of what was delivered, if it gave one.
	RemoteID string
}

// FinishDelivery records an attempt and the delivery's new state in one
// transaction.
func (s *Store) FinishDelivery(ctx context.Context, id int64, r DeliveryResult) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		a := r.Attempt
		var next int64
		if !r.NextAttemptAt.IsZero() {
			next = r.NextAttemptAt.UnixNano()
		}
		if err := tx.Create(&deliveryAttemptRow{DeliveryID: id, Attempt: a.Attempt, StartedAt: a.StartedAt, DurationNs: int64(a.Duration),
			Status: a.Status, Error: a.Error}).Error; err != nil {
			return err
		}
		set := map[string]any{"status": string(r.Status), "last_status": a.Status, "last_error": a.Error, "next_attempt_ns": next, "updated_at": s.Now()}
		if r.Status == domain.DeliveryPending {
			// Archived while this attempt was under way: it is parked as
			// archiving parked the rest, not tried again.
			parked, err := onArchived(tx, id)
			if err != nil {
				return err
			}
			if parked {
				set["status"], set["last_error"] = string(domain.DeliveryDisabled), archivedNote
			}
		}
		if r.RemoteID != "" {
			set["remote_id"] = r.RemoteID
		}
		res := tx.Model(&deliveryRow{}).Where("id = ?", id).Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		if !r.DisableStream {
			return nil
		}
		var row deliveryRow
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&disabledEndpointRow{StreamID: row.StreamID, Reason: a.Error, CreatedAt: s.Now()}).Error; err != nil {
			return err
		}
		return tx.Model(&deliveryRow{}).Where("stream_id = ? AND status = ?", row.StreamID, string(domain.DeliveryPending)).
			Updates(map[string]any{"status": string(domain.DeliveryDisabled), "last_error": "the stream's endpoint is disabled", "updated_at": s.Now()}).Error
	})
	if err != nil {
		return fmt.Errorf("finish delivery %d: %w", id, err)
	}
	return nil
}

// DeliveryQuery selects deliveries, newest first.
type DeliveryQuery struct {
	StreamID string
	EventID  string
	Status   domain.DeliveryStatus
	Limit    int
}

// ListDeliveries returns deliveries with their attempt logs.
func (s *Store) ListDeliveries(ctx context.Context, q DeliveryQuery) ([]domain.Delivery, error) {
	if q.Limit <= 0 || q.Limit > MaxReadLimit {
		q.Limit = MaxReadLimit
	}
	db := s.read(ctx).Order("id DESC").Limit(q.Limit)
	if q.StreamID != "" {
		db = db.Where("stream_id = ?", q.StreamID)
	}
	if q.EventID != "" {
		db = db.Where("event_id = ?", q.EventID)
	}
	if q.Status != "" {
		db = db.Where("status = ?", string(q.Status))
	}
	var rows []deliveryRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	out := mapRows(rows, deliveryRow.toDomain)
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]int64, len(out))
	byID := map[int64]*domain.Delivery{}
	for i := range out {
		ids[i] = out[i].ID
		byID[out[i].ID] = &out[i]
	}
	var attempts []deliveryAttemptRow
	if err := s.read(ctx).Where("delivery_id IN ?", ids).Order("id").Find(&attempts).Error; err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	for _, a := range attempts {
		d := byID[a.DeliveryID]
		d.Log = append(d.Log, a.toDomain())
	}
	return out, nil
}

// DisabledEndpoints lists the streams whose outbound endpoint is disabled.
func (s *Store) DisabledEndpoints(ctx context.Context) ([]string, error) {
	var ids []string
	if err := s.read(ctx).Model(&disabledEndpointRow{}).Order("stream_id").Pluck("stream_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("disabled endpoints: %w", err)
	}
	return ids, nil
}

// EnableEndpoint lifts a stream's disabled endpoint, so events published
// from now on are delivered again. Deliveries refused while it was disabled
// stay as they are: they were never sent, and resending them late could
// surprise the remote more than the gap does.
func (s *Store) EnableEndpoint(ctx context.Context, actor, stream string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		found, err := s.enableEndpoint(tx, actor, stream, nil)
		if err == nil && !found {
			return fmt.Errorf("stream %q has no disabled endpoint: %w", stream, domain.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("enable endpoint of %s: %w", stream, err)
	}
	return nil
}

// enableEndpoint lifts stream's disabled endpoint in tx, audited as an
// enable_endpoint (after, when given, says why); found says it was
// disabled.
func (s *Store) enableEndpoint(tx *gorm.DB, actor, stream string, after any) (found bool, err error) {
	var row disabledEndpointRow
	if err := tx.Where("stream_id = ?", stream).Take(&row).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return false, nil
		}
		return false, err
	}
	if err := tx.Where("stream_id = ?", stream).Delete(&disabledEndpointRow{}).Error; err != nil {
		return true, err
	}
	return true, s.audit(tx, Change{Action: "enable_endpoint", Actor: actor, Target: stream,
		Before: map[string]string{"stream": stream, "disabled": row.Reason}, After: after})
}

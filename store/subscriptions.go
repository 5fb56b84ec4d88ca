package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type subscriptionRow struct {
	WorkerID  string     `gorm:"primaryKey"`
	Worker    *workerRow `gorm:"foreignKey:WorkerID"`
	StreamID  string     `gorm:"primaryKey;index"`
	Stream    *streamRow `gorm:"foreignKey:StreamID"`
	CreatedAt time.Time
}

func (subscriptionRow) TableName() string { return "subscriptions" }

func (r subscriptionRow) toDomain() domain.Subscription {
	return domain.Subscription{WorkerID: r.WorkerID, StreamID: r.StreamID, CreatedAt: r.CreatedAt.UTC()}
}

// Subscribe ties workers to a stream. It is idempotent: added lists only
// the workers that were not already members. The actor subscribes itself
// or workers below it, and each must be allowed to read the stream (see
// CheckReads); a DM is joined only by its own members, each for itself.
// An archived stream takes no new member.
func (s *Store) Subscribe(ctx context.Context, actor, stream string, workers ...string) (added []string, err error) {
	err = s.write(ctx, func(tx *gorm.DB) error {
		added = nil
		var st streamRow
		if err := tx.Select("id", "created_by", "private", "archived_at").Where("id = ?", stream).Take(&st).Error; err != nil {
			return notFoundOr(err, "stream", stream)
		}
		if st.ArchivedAt != nil {
			return domain.StreamArchived("stream", stream)
		}
		if err := joinsPrivate(tx, actor, st); err != nil {
			return err
		}
		az := newAuthz(tx)
		for _, w := range workers {
			var wr workerRow
			if err := tx.Where("id = ?", w).Take(&wr).Error; err != nil {
				return notFoundOr(err, "worker", w)
			}
			if wr.DismissedAt != nil {
				return fmt.Errorf("worker %q is dismissed: %w", w, domain.ErrConflict)
			}
			if err := checkMembership(az, actor, stream, w); err != nil {
				return err
			}
			if err := az.reads(w, stream); err != nil {
				return err
			}
			var n int64
			if err := tx.Model(&subscriptionRow{}).Where("worker_id = ? AND stream_id = ?", w, stream).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			if err := tx.Create(&subscriptionRow{WorkerID: w, StreamID: stream, CreatedAt: s.Now()}).Error; err != nil {
				return err
			}
			added = append(added, w)
			if err := s.audit(tx, Change{Action: "subscribe", Actor: actor, Target: w, After: map[string]string{"stream": stream, "worker": w}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", stream, err)
	}
	return added, nil
}

// Unsubscribe removes a worker from a stream: the actor itself, or a
// worker below it. Nobody else removes a member from a DM, whatever its
// place in the chart.
func (s *Store) Unsubscribe(ctx context.Context, actor, stream, worker string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := checkMembership(newAuthz(tx), actor, stream, worker); err != nil {
			return err
		}
		res := tx.Where("worker_id = ? AND stream_id = ?", worker, stream).Delete(&subscriptionRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("worker %q is not subscribed to %q: %w", worker, stream, domain.ErrNotFound)
		}
		return s.audit(tx, Change{Action: "unsubscribe", Actor: actor, Target: worker, Before: map[string]string{"stream": stream, "worker": worker}})
	})
	if err != nil {
		return fmt.Errorf("unsubscribe from %s: %w", stream, err)
	}
	return nil
}

// checkMembership says whether actor may change worker's membership of
// stream: its own always (reading rules aside), another's only below it,
// and never another's of a DM.
func checkMembership(az *authz, actor, stream, worker string) error {
	if actor == "" || actor == worker {
		return nil
	}
	if domain.IsDM(stream) {
		return domain.Forbidden("%s is a direct-message stream; only its members join or leave it, each for itself", stream)
	}
	return az.manages(actor, worker)
}

// StreamMembers lists a stream's subscriptions by worker id.
func (s *Store) StreamMembers(ctx context.Context, stream string) ([]domain.Subscription, error) {
	if _, err := s.GetStream(ctx, stream); err != nil {
		return nil, err
	}
	var rows []subscriptionRow
	if err := s.read(ctx).Where("stream_id = ?", stream).Order("worker_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("members of %s: %w", stream, err)
	}
	return mapRows(rows, subscriptionRow.toDomain), nil
}

// SubscribedStreams lists the stream ids a worker follows. Every read
// asks it, so it is kept at epochAccess (access_cache.go), and read as
// one fixed statement, prepared once.
func (s *Store) SubscribedStreams(ctx context.Context, worker string) ([]string, error) {
	ids, err := s.cachedSubscriptions(ctx, worker)
	if err != nil {
		return nil, fmt.Errorf("subscriptions of %s: %w", worker, err)
	}
	return ids, nil
}

func (s *Store) subscribedStreams(ctx context.Context, worker string) ([]string, error) {
	rows, err := s.queryFixed(s.read(ctx), `SELECT stream_id FROM subscriptions WHERE worker_id = ? ORDER BY stream_id`, worker)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// joinsPrivate: only a private stream's creator or members add members to
// it (the operator too), since what is on it is theirs alone to share.
func joinsPrivate(tx *gorm.DB, actor string, st streamRow) error {
	if !st.Private || actor == "" || actor == st.CreatedBy {
		return nil
	}
	var n int64
	if err := tx.Model(&subscriptionRow{}).Where("worker_id = ? AND stream_id = ?", actor, st.ID).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return domain.Forbidden("%s is private; only its members (and %s, who created it) add members to it", st.ID, st.CreatedBy)
	}
	return nil
}

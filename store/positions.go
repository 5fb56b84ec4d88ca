package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type positionRow struct {
	ID        string       `gorm:"primaryKey"`
	RoleID    string       `gorm:"not null;index"`
	Role      *roleRow     `gorm:"foreignKey:RoleID"`
	Title     string       `gorm:"not null"`
	ReportsTo *string      `gorm:"index"`
	Manager   *positionRow `gorm:"foreignKey:ReportsTo"`
	CreatedAt time.Time
}

func (positionRow) TableName() string { return "positions" }

func (r positionRow) toDomain() domain.Position {
	p := domain.Position{ID: r.ID, RoleID: r.RoleID, Title: r.Title, CreatedAt: r.CreatedAt.UTC()}
	if r.ReportsTo != nil {
		p.ReportsTo = *r.ReportsTo
	}
	return p
}

// CreatePosition stores a seat for a role, reporting to another position.
// It must land strictly below the actor's own position: reportsTo is the
// actor's position or one below it, and defaults to the actor's position
// (to the owner's, the root, when the owner or the operator creates it).
func (s *Store) CreatePosition(ctx context.Context, actor string, p domain.Position) (domain.Position, error) {
	if err := p.Validate(); err != nil {
		return domain.Position{}, err
	}
	var row positionRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if ok, err := exists(tx, &roleRow{}, p.RoleID); err != nil || !ok {
			return orNotFound(err, "role", p.RoleID)
		}
		az := newAuthz(tx)
		if p.ReportsTo == "" && actor != "" && actor != domain.OwnerWorker {
			as, err := az.seat(actor)
			if err != nil {
				return err
			}
			p.ReportsTo = as.Position
		}
		if p.ReportsTo != "" {
			if ok, err := exists(tx, &positionRow{}, p.ReportsTo); err != nil || !ok {
				return orNotFound(err, "position", p.ReportsTo)
			}
		}
		id, err := pickID(tx, &positionRow{}, "position", domain.PrefixPosition, p.ID, p.Title)
		if err != nil {
			return err
		}
		chart, err := az.loadChart()
		if err != nil {
			return err
		}
		if err := chart.CheckReportsTo(id, p.ReportsTo); err != nil {
			return err
		}
		chart[id] = p.ReportsTo
		if err := az.places(actor, id); err != nil {
			return err
		}
		row = positionRow{ID: id, RoleID: p.RoleID, Title: p.Title, CreatedAt: s.Now()}
		if p.ReportsTo != "" {
			row.ReportsTo = &p.ReportsTo
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_position", Actor: actor, Target: id, After: row.toDomain()})
	})
	if err != nil {
		return domain.Position{}, fmt.Errorf("create position: %w", err)
	}
	return row.toDomain(), nil
}

// GetPosition returns one position.
func (s *Store) GetPosition(ctx context.Context, id string) (domain.Position, error) {
	var r positionRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Position{}, notFoundOr(err, "position", id)
	}
	return r.toDomain(), nil
}

// ListPositions returns every position by id.
func (s *Store) ListPositions(ctx context.Context) ([]domain.Position, error) {
	var rows []positionRow
	if err := s.read(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list positions: %w", err)
	}
	return mapRows(rows, positionRow.toDomain), nil
}

// orNotFound returns err if set, else a not-found error for kind/id.
func orNotFound(err error, kind, id string) error {
	if err != nil {
		return err
	}
	return domain.NotFound(kind, id)
}

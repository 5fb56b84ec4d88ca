package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type roleRow struct {
	ID        string `gorm:"primaryKey"`
	Title     string `gorm:"not null"`
	Content   string `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (roleRow) TableName() string { return "roles" }

func (r roleRow) toDomain() domain.Role {
	return domain.Role{ID: r.ID, Title: r.Title, Content: r.Content, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// CreateRole stores a new role; an empty ID is derived from the title.
func (s *Store) CreateRole(ctx context.Context, actor string, r domain.Role) (domain.Role, error) {
	if err := r.Validate(); err != nil {
		return domain.Role{}, err
	}
	var row roleRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		id, err := pickID(tx, &roleRow{}, "role", domain.PrefixRole, r.ID, r.Title)
		if err != nil {
			return err
		}
		now := s.Now()
		row = roleRow{ID: id, Title: r.Title, Content: r.Content, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_role", Actor: actor, Target: id, After: row.toDomain()})
	})
	if err != nil {
		return domain.Role{}, fmt.Errorf("create role: %w", err)
	}
	return row.toDomain(), nil
}

// RoleUpdate holds the fields update_role may change; nil means unchanged.
type RoleUpdate struct {
	Title   *string
	Content *string
}

// UpdateRole edits a role live: the next activation reads the new text.
// The actor must be above every position that holds the role (so nobody
// rewrites its own job or a peer's); a role no position holds is edited by
// its creator or the owner.
func (s *Store) UpdateRole(ctx context.Context, actor, id string, u RoleUpdate) (domain.Role, error) {
	var after roleRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		var before roleRow
		if err := tx.Where("id = ?", id).Take(&before).Error; err != nil {
			return domain.NotFound("role", id)
		}
		if err := checkEditsRole(tx, actor, id); err != nil {
			return err
		}
		after = before
		if u.Title != nil {
			after.Title = *u.Title
		}
		if u.Content != nil {
			after.Content = *u.Content
		}
		if err := after.toDomain().Validate(); err != nil {
			return err
		}
		after.UpdatedAt = s.Now()
		if err := tx.Save(&after).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "update_role", Actor: actor, Target: id, Before: before.toDomain(), After: after.toDomain()})
	})
	if err != nil {
		return domain.Role{}, fmt.Errorf("update role: %w", err)
	}
	return after.toDomain(), nil
}

func checkEditsRole(tx *gorm.DB, actor, role string) error {
	if actor == "" || actor == domain.OwnerWorker {
		return nil
	}
	var holders []string
	if err := tx.Model(&positionRow{}).Where("role_id = ?", role).Order("id").Pluck("id", &holders).Error; err != nil {
		return err
	}
	creator := ""
	if len(holders) == 0 {
		var err error
		if creator, err = roleCreator(tx, role); err != nil {
			return err
		}
	}
	az := newAuthz(tx)
	as, err := az.seat(actor)
	if err != nil {
		return err
	}
	chart, err := az.loadChart()
	if err != nil {
		return err
	}
	return chart.CheckEditsRole(as, role, holders, creator)
}

// roleCreator reads who created a role from its create_role change on
// s-org, which is written in the same transaction as the role and so
// cannot disagree with it. Roles carry no creator column of their own.
func roleCreator(tx *gorm.DB, role string) (string, error) {
	var src []string
	err := tx.Model(&eventRow{}).Where("stream_id = ? AND body LIKE ?", domain.StreamOrg, `%"subject":"create_role `+role+`"%`).
		Order("seq").Limit(1).Pluck("source", &src).Error
	if err != nil || len(src) == 0 {
		return "", err
	}
	return src[0], nil
}

// GetRole returns one role.
func (s *Store) GetRole(ctx context.Context, id string) (domain.Role, error) {
	var r roleRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Role{}, notFoundOr(err, "role", id)
	}
	return r.toDomain(), nil
}

// ListRoles returns every role by id.
func (s *Store) ListRoles(ctx context.Context) ([]domain.Role, error) {
	var rows []roleRow
	if err := s.read(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return mapRows(rows, roleRow.toDomain), nil
}

func mapRows[R, D any](rows []R, f func(R) D) []D {
	out := make([]D, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// notFoundOr names the missing record, or wraps a real failure.
func notFoundOr(err error, kind, id string) error {
	if mapped := mapErr(err); mapped != err {
		return domain.NotFound(kind, id)
	}
	return fmt.Errorf("get %s %q: %w", kind, id, err)
}

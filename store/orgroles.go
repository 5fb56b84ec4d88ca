package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// orgRoleRow is a person's org role. A human without one is a member:
// that is what every person was before org roles, so nothing changes
// for an org that never sets one. The owner is always an admin.
type orgRoleRow struct {
	WorkerID  string `gorm:"primaryKey"`
	Role      string `gorm:"not null"`
	UpdatedBy string
	UpdatedAt time.Time
}

func (orgRoleRow) TableName() string { return "org_roles" }

// OrgRole returns a worker's org role: "" for an AI worker, which acts
// through the chart alone.
//
// Every tool call asks it, so it is kept at epochAccess
// (access_cache.go), and read as one fixed statement, prepared once,
// rather than a query GORM builds each time.
func (s *Store) OrgRole(ctx context.Context, worker string) (domain.OrgRole, error) {
	return s.cachedRole(ctx, worker, func() (domain.OrgRole, error) {
		var (
			kind string
			role sql.NullString
		)
		found, err := s.scanFixed(s.read(ctx), orgRoleSQL, []any{worker}, &kind, &role)
		if err == nil && !found {
			err = domain.NotFound("worker", worker)
		}
		if err != nil {
			return "", fmt.Errorf("org role of %s: %w", worker, err)
		}
		return orgRoleFrom(worker, kind, role), nil
	})
}

const orgRoleSQL = `SELECT workers.kind, org_roles.role FROM workers
	LEFT JOIN org_roles ON org_roles.worker_id = workers.id WHERE workers.id = ?`

// orgRoleOf reads the role in one query, inside tx.
func orgRoleOf(tx *gorm.DB, worker string) (domain.OrgRole, error) {
	var res struct {
		Kind string
		Role sql.NullString
	}
	err := tx.Table("workers").Select("workers.kind AS kind, org_roles.role AS role").
		Joins("LEFT JOIN org_roles ON org_roles.worker_id = workers.id").
		Where("workers.id = ?", worker).Take(&res).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", domain.NotFound("worker", worker)
	case err != nil:
		return "", err
	}
	return orgRoleFrom(worker, res.Kind, res.Role), nil
}

// orgRoleFrom is a worker's org role from its kind and its stored role.
func orgRoleFrom(worker, kind string, role sql.NullString) domain.OrgRole {
	switch {
	case kind != string(domain.WorkerHuman):
		return ""
	case worker == OwnerWorker:
		return domain.RoleAdmin
	case !role.Valid:
		return domain.RoleMember
	}
	return domain.OrgRole(role.String)
}

// SetOrgRole gives a person an org role. Only an admin does; the owner
// stays an admin, so the org always has one.
func (s *Store) SetOrgRole(ctx context.Context, actor, worker string, role domain.OrgRole) (domain.OrgRole, error) {
	if err := role.Validate("role"); err != nil {
		return "", err
	}
	var before domain.OrgRole
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := mayAdminister(tx, actor, "set org roles"); err != nil {
			return err
		}
		var w workerRow
		if err := tx.Where("id = ?", worker).Take(&w).Error; err != nil {
			return notFoundOr(err, "worker", worker)
		}
		switch {
		case w.Kind != string(domain.WorkerHuman):
			return domain.Invalid("worker", "%s is an AI worker; org roles are people's (an AI worker acts through the chart and its grants)", worker)
		case w.DismissedAt != nil:
			return fmt.Errorf("worker %q is dismissed: %w", worker, domain.ErrConflict)
		case worker == OwnerWorker:
			return domain.Invalid("worker", "%s is the owner, always an admin", worker)
		}
		var err error
		if before, err = orgRoleOf(tx, worker); err != nil {
			return err
		}
		if err := tx.Save(&orgRoleRow{WorkerID: worker, Role: string(role), UpdatedBy: actor, UpdatedAt: s.Now()}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "set_org_role", Actor: actor, Target: worker,
			Before: map[string]string{"role": string(before)}, After: map[string]string{"role": string(role)}})
	})
	if err != nil {
		return "", fmt.Errorf("set org role: %w", err)
	}
	return before, nil
}

// mayAdminister refuses an actor that is not an admin, naming its role.
func mayAdminister(tx *gorm.DB, actor, what string) error {
	role, err := orgRoleOf(tx, actor)
	if err != nil {
		return err
	}
	if role == "" {
		return domain.Forbidden("%s is an AI worker and may not %s: that is an admin's", actor, what)
	}
	return role.MayAdminister(what)
}

// Admins are the active people who run the org, the owner first: whom
// someone refused at sign-in can ask for an invitation.
func (s *Store) Admins(ctx context.Context) ([]domain.Worker, error) {
	var rows []workerRow
	err := s.read(ctx).Table("workers").Select("workers.*").
		Joins("LEFT JOIN org_roles ON org_roles.worker_id = workers.id").
		Where("workers.dismissed_at IS NULL AND workers.kind = ?", string(domain.WorkerHuman)).
		Where("workers.id = ? OR org_roles.role = ?", OwnerWorker, string(domain.RoleAdmin)).
		Order(clause.Expr{SQL: "CASE WHEN workers.id = ? THEN 0 ELSE 1 END, workers.hired_at, workers.id", Vars: []any{OwnerWorker}}).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list admins: %w", err)
	}
	out := make([]domain.Worker, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/helixml/helix-org/domain"
)

// WorkerOrgRole is a person's org role as an export holds it.
type WorkerOrgRole struct {
	Worker    string
	Role      domain.OrgRole
	UpdatedBy string
	UpdatedAt time.Time
}

// ExportOrgRoles returns every org role set, by worker.
func (s *Store) ExportOrgRoles(ctx context.Context) ([]WorkerOrgRole, error) {
	var rows []orgRoleRow
	if err := s.read(ctx).Order("worker_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("export org roles: %w", err)
	}
	return mapRows(rows, func(r orgRoleRow) WorkerOrgRole {
		return WorkerOrgRole{Worker: r.WorkerID, Role: domain.OrgRole(r.Role), UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt.UTC()}
	}), nil
}

// OrgRole writes a person's org role as exported.
func (im *Importer) OrgRole(r WorkerOrgRole) error {
	what := "org role of " + r.Worker
	if err := r.Role.Validate("role"); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var w workerRow
	if err := im.tx.Where("id = ?", r.Worker).Take(&w).Error; err != nil {
		return fmt.Errorf("%s: %w", what, notFoundOr(err, "worker", r.Worker))
	}
	if w.Kind != string(domain.WorkerHuman) {
		return fmt.Errorf("%s: %w", what, domain.Invalid("worker", "%s is an AI worker; org roles are people's", r.Worker))
	}
	return im.create("org roles", &orgRoleRow{WorkerID: r.Worker, Role: string(r.Role), UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt})
}

// ExportInvitations returns every invitation, oldest first. They travel
// with the org: a pending worker's mailed contact binds nobody until its
// invitation is accepted, and that must hold in the copy too.
func (s *Store) ExportInvitations(ctx context.Context) ([]Invitation, error) {
	var rows []invitationRow
	if err := s.read(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("export invitations: %w", err)
	}
	now := s.Now()
	return mapRows(rows, func(r invitationRow) Invitation { return r.toInvitation(now) }), nil
}

// Invitation writes an invitation as exported; its worker comes first.
func (im *Importer) Invitation(inv Invitation) error {
	what := "invitation " + inv.ID
	email, err := NormalEmail("email", inv.Email)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := domain.OrgRole(inv.Role).Validate("role"); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if ok, err := exists(im.tx, &workerRow{}, inv.Worker); err != nil || !ok {
		return fmt.Errorf("%s: %w", what, orNotFound(err, "worker", inv.Worker))
	}
	return im.create("invitations", &invitationRow{ID: inv.ID, Email: email, WorkerID: inv.Worker, Role: inv.Role, InvitedBy: inv.InvitedBy,
		CreatedAt: inv.CreatedAt, SentAt: inv.SentAt, ExpiresAt: inv.ExpiresAt, AcceptedAt: inv.AcceptedAt, RevokedAt: inv.RevokedAt})
}

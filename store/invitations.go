package store

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Invitation states, derived from the row and the clock.
const (
	InvitePending  = "pending"
	InviteAccepted = "accepted"
	InviteExpired  = "expired"
	InviteRevoked  = "revoked"
)

var (
	// ErrInviteExpired refuses a sign-in on an invitation past its expiry.
	ErrInviteExpired = fmt.Errorf("your invitation has expired; ask an admin to invite you again: %w", domain.ErrForbidden)
	// ErrInviteRevoked refuses a sign-in on a revoked invitation.
	ErrInviteRevoked = fmt.Errorf("your invitation was revoked: %w", domain.ErrForbidden)
	// ErrNotInvited refuses a sign-in whose email is no person's here.
	ErrNotInvited = fmt.Errorf("this email belongs to no one in the organisation and has no invitation: %w", domain.ErrForbidden)
)

// invitationRow is a person asked to join: the pending human worker made
// for them, bound to whoever signs in with the email.
type invitationRow struct {
	ID         string `gorm:"primaryKey"`
	Email      string `gorm:"not null;index"`
	WorkerID   string `gorm:"not null;index"`
	Role       string `gorm:"not null"`
	InvitedBy  string `gorm:"not null"`
	CreatedAt  time.Time
	SentAt     time.Time
	ExpiresAt  time.Time `gorm:"not null"`
	AcceptedAt *time.Time
	RevokedAt  *time.Time
}

func (invitationRow) TableName() string { return "invitations" }

// Invitation is an invitation as tools show it.
type Invitation struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	Worker     string     `json:"worker"`
	Role       string     `json:"role"`
	InvitedBy  string     `json:"invitedBy"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"createdAt"`
	SentAt     time.Time  `json:"sentAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	AcceptedAt *time.Time `json:"acceptedAt,omitempty"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
}

func (r invitationRow) status(now time.Time) string {
	switch {
	case r.RevokedAt != nil:
		return InviteRevoked
	case r.AcceptedAt != nil:
		return InviteAccepted
	case !now.Before(r.ExpiresAt):
		return InviteExpired
	}
	return InvitePending
}

func (r invitationRow) toInvitation(now time.Time) Invitation {
	return Invitation{ID: r.ID, Email: r.Email, Worker: r.WorkerID, Role: r.Role, InvitedBy: r.InvitedBy, Status: r.status(now),
		CreatedAt: r.CreatedAt.UTC(), SentAt: r.SentAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), AcceptedAt: utcPtr(r.AcceptedAt), RevokedAt: utcPtr(r.RevokedAt)}
}

// InviteSpec is who to invite, where, and for how long.
type InviteSpec struct {
	Email    string
	Position string
	Role     domain.OrgRole
	TTL      time.Duration
}

// NormalEmail is an address as invitations and sign-in compare it: the
// bare address, lower case.
func NormalEmail(field, raw string) (string, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(raw))
	if err != nil || strings.ContainsAny(a.Address, " <>") {
		return "", domain.Invalid(field, "%q is not an email address such as lee@example.com", raw)
	}
	return strings.ToLower(a.Address), nil
}

// Invite makes a pending human worker in a position for a person who
// will sign in with email, or, when that email has an invitation not yet
// accepted, renews it (resent). Only an admin invites.
func (s *Store) Invite(ctx context.Context, actor string, spec InviteSpec) (inv Invitation, resent bool, err error) {
	email, err := NormalEmail("email", spec.Email)
	if err != nil {
		return Invitation{}, false, err
	}
	if err := spec.Role.Validate("role"); err != nil {
		return Invitation{}, false, err
	}
	var row invitationRow
	err = s.write(ctx, func(tx *gorm.DB) error {
		if err := mayAdminister(tx, actor, "invite people"); err != nil {
			return err
		}
		now := s.Now()
		if w, err := boundWorker(tx, email); err != nil || w != "" {
			return errors.Join(err, domainConflict("%s is already in the organisation as %s", email, w))
		}
		err := tx.Where("email = ? AND revoked_at IS NULL AND accepted_at IS NULL", email).Order("created_at DESC").Take(&row).Error
		if err == nil {
			resent = true
			row.ExpiresAt, row.SentAt, row.Role = now.Add(spec.TTL), now, string(spec.Role)
			if err := tx.Save(&row).Error; err != nil {
				return err
			}
			if err := tx.Save(&orgRoleRow{WorkerID: row.WorkerID, Role: row.Role, UpdatedBy: actor, UpdatedAt: now}).Error; err != nil {
				return err
			}
			return s.audit(tx, Change{Action: "invite", Actor: actor, Target: row.WorkerID, After: map[string]any{"email": email, "resent": true}})
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if spec.Position == "" {
			return domain.Required("position")
		}
		name, _, _ := strings.Cut(email, "@")
		w, err := s.hireTx(tx, actor, domain.Worker{Kind: domain.WorkerHuman, PositionID: spec.Position, Name: name,
			Identity: "Invited as " + email + "."}, nil)
		if err != nil {
			return err
		}
		if err := tx.Create(&orgRoleRow{WorkerID: w.ID, Role: string(spec.Role), UpdatedBy: actor, UpdatedAt: now}).Error; err != nil {
			return err
		}
		row = invitationRow{ID: "inv-" + domain.RandomSlug(10), Email: email, WorkerID: w.ID, Role: string(spec.Role), InvitedBy: actor,
			CreatedAt: now, SentAt: now, ExpiresAt: now.Add(spec.TTL)}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "invite", Actor: actor, Target: w.ID, After: map[string]any{"email": email, "role": spec.Role, "invitation": row.ID}})
	})
	if err != nil {
		return Invitation{}, false, fmt.Errorf("invite: %w", err)
	}
	return row.toInvitation(s.Now()), resent, nil
}

func domainConflict(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, domain.ErrConflict)...)
}

// boundWorker is the active person an email already signs in as: by an
// email contact, or by an accepted invitation; "" when none. A pending
// worker's contact (the address its invitation was mailed to) binds
// nothing until the invitation is accepted, so expiry and revocation hold.
func boundWorker(tx *gorm.DB, email string) (string, error) {
	var ids []string
	err := tx.Table("contacts").Joins("JOIN workers ON workers.id = contacts.worker_id").
		Where("contacts.kind = ? AND LOWER(contacts.address) = ? AND workers.dismissed_at IS NULL AND workers.kind = ?", "email", email, string(domain.WorkerHuman)).
		Where("NOT EXISTS (SELECT 1 FROM invitations WHERE invitations.worker_id = contacts.worker_id AND invitations.accepted_at IS NULL)").
		Order("contacts.worker_id").Limit(1).Pluck("contacts.worker_id", &ids).Error
	if err != nil || len(ids) > 0 {
		return first(ids), err
	}
	err = tx.Table("invitations").Joins("JOIN workers ON workers.id = invitations.worker_id").
		Where("invitations.email = ? AND invitations.accepted_at IS NOT NULL AND invitations.revoked_at IS NULL AND workers.dismissed_at IS NULL", email).
		Order("invitations.accepted_at DESC").Limit(1).Pluck("invitations.worker_id", &ids).Error
	return first(ids), err
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// ListInvitations returns every invitation, newest first.
func (s *Store) ListInvitations(ctx context.Context) ([]Invitation, error) {
	var rows []invitationRow
	if err := s.read(ctx).Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	now := s.Now()
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = r.toInvitation(now)
	}
	return out, nil
}

// GetInvitation returns one invitation.
func (s *Store) GetInvitation(ctx context.Context, id string) (Invitation, error) {
	var r invitationRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return Invitation{}, notFoundOr(err, "invitation", id)
	}
	return r.toInvitation(s.Now()), nil
}

// RevokeInvitation withdraws an invitation not yet accepted and
// dismisses the pending worker made for it. An accepted one is a person
// now: dismiss the worker instead.
func (s *Store) RevokeInvitation(ctx context.Context, actor, id string) (Invitation, error) {
	var row invitationRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := mayAdminister(tx, actor, "revoke invitations"); err != nil {
			return err
		}
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "invitation", id)
		}
		switch row.status(s.Now()) {
		case InviteAccepted:
			return domainConflict("invitation %s was accepted: %s is in the organisation; dismiss_worker removes them", id, row.WorkerID)
		case InviteRevoked:
			return nil
		}
		now := s.Now()
		row.RevokedAt = &now
		if err := tx.Save(&row).Error; err != nil {
			return err
		}
		if err := tx.Model(&workerRow{}).Where("id = ? AND dismissed_at IS NULL", row.WorkerID).Update("dismissed_at", now).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "revoke_invitation", Actor: actor, Target: row.WorkerID, After: map[string]any{"invitation": id, "email": row.Email}})
	})
	if err != nil {
		return Invitation{}, fmt.Errorf("revoke invitation: %w", err)
	}
	return row.toInvitation(s.Now()), nil
}

// emailWorker is the worker a verified email signs in as: a person with
// that email contact, or an accepted invitation's, or a pending one's,
// which this accepts. It refuses an expired or revoked invitation and an
// email nobody invited.
func (s *Store) emailWorker(tx *gorm.DB, email string) (string, error) {
	w, err := boundWorker(tx, email)
	if err != nil || w != "" {
		return w, err
	}
	var row invitationRow
	err = tx.Where("email = ? AND accepted_at IS NULL", email).Order("created_at DESC").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", ErrNotInvited
	}
	if err != nil {
		return "", err
	}
	switch row.status(s.Now()) {
	case InviteRevoked:
		return "", ErrInviteRevoked
	case InviteExpired:
		return "", ErrInviteExpired
	}
	now := s.Now()
	row.AcceptedAt = &now
	if err := tx.Save(&row).Error; err != nil {
		return "", err
	}
	return row.WorkerID, s.audit(tx, Change{Action: "accept_invitation", Actor: row.WorkerID, Target: row.WorkerID, After: map[string]any{"invitation": row.ID, "email": email}})
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Owner identifiers created by Bootstrap.
const (
	OwnerRole     = domain.OwnerRole
	OwnerPosition = domain.OwnerPosition
	OwnerWorker   = domain.OwnerWorker
)

// Bootstrap makes sure the owner exists and holds every tool; see
// BootstrapReport.
func (s *Store) Bootstrap(ctx context.Context, tools []string) (domain.Worker, error) {
	r, err := s.BootstrapReport(ctx, tools)
	return r.Owner, err
}

// Bootstrapped is what BootstrapReport did.
type Bootstrapped struct {
	Owner domain.Worker
	// Created is true when this call created the owner.
	Created bool
	// Repaired lists what had to be put right on an existing owner.
	Repaired []string
}

// BootstrapReport creates the owner, or restores it whatever was done to it
// over MCP: w-owner undismissed, in p-owner, p-owner at the root of the
// chart, and a grant of every tool that never expires. It is the
// operator's way back and is idempotent. repaired lists what had to be
// put right on an owner that already existed (empty on a healthy or a new
// one); the repair is one change on s-org.
func (s *Store) BootstrapReport(ctx context.Context, tools []string) (Bootstrapped, error) {
	var r Bootstrapped
	err := s.write(ctx, func(tx *gorm.DB) error {
		r = Bootstrapped{}
		if err := s.ensureOwnerSeat(tx); err != nil {
			return err
		}
		var w workerRow
		err := tx.Where("id = ?", OwnerWorker).Take(&w).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			r.Created = true
			return s.createOwner(tx, tools)
		}
		if err != nil {
			return err
		}
		if r.Repaired, err = s.repairOwner(tx, w, tools); err != nil || len(r.Repaired) == 0 {
			return err
		}
		return s.audit(tx, Change{Action: "restore_owner", Target: OwnerWorker, After: map[string]any{"repaired": r.Repaired}})
	})
	if err != nil {
		return Bootstrapped{}, fmt.Errorf("bootstrap: %w", err)
	}
	r.Owner, err = s.GetWorker(ctx, OwnerWorker)
	return r, err
}

// ensureOwnerSeat creates r-owner and p-owner when missing.
func (s *Store) ensureOwnerSeat(tx *gorm.DB) error {
	now := s.Now()
	if ok, err := exists(tx, &roleRow{}, OwnerRole); err != nil || !ok {
		if err != nil {
			return err
		}
		r := roleRow{ID: OwnerRole, Title: "Owner", Content: ownerRole, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&r).Error; err != nil {
			return err
		}
		if err := s.audit(tx, Change{Action: "create_role", Target: OwnerRole, After: r.toDomain()}); err != nil {
			return err
		}
	}
	if ok, err := exists(tx, &positionRow{}, OwnerPosition); err != nil || !ok {
		if err != nil {
			return err
		}
		p := positionRow{ID: OwnerPosition, RoleID: OwnerRole, Title: "Owner", CreatedAt: now}
		if err := tx.Create(&p).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_position", Target: OwnerPosition, After: p.toDomain()})
	}
	return nil
}

func (s *Store) createOwner(tx *gorm.DB, tools []string) error {
	w := workerRow{ID: OwnerWorker, Kind: string(domain.WorkerHuman), PositionID: OwnerPosition, Name: "Owner",
		Identity: "The organisation's owner.", HiredAt: s.Now()}
	if err := tx.Create(&w).Error; err != nil {
		return err
	}
	if err := s.audit(tx, Change{Action: "hire_worker", Target: OwnerWorker, After: w.toDomain()}); err != nil {
		return err
	}
	// A new owner holds nothing yet: its grants go in as one statement
	// rather than a lookup and an upsert each (grantTx), which made
	// creating an org cost a quarter of some packages' test CPU; each is
	// audited as grantTx audits it.
	rows := make([]grantRow, len(tools))
	for i, t := range tools {
		rows[i] = grantRow{WorkerID: OwnerWorker, Tool: t, CreatedAt: s.Now()}
	}
	if len(rows) > 0 {
		if err := tx.Create(&rows).Error; err != nil {
			return fmt.Errorf("grant the owner its tools: %w", err)
		}
	}
	for _, r := range rows {
		if err := s.audit(tx, Change{Action: "grant_tool", Target: OwnerWorker, After: r.toDomain()}); err != nil {
			return err
		}
	}
	// The owner alone may read the audit trail; it follows it from the
	// start, as a worker reads only what it follows.
	return tx.Create(&subscriptionRow{WorkerID: OwnerWorker, StreamID: domain.StreamOrg, CreatedAt: s.Now()}).Error
}

// repairOwner puts an existing owner back as bootstrap made it and says
// what it changed. Grants of tools new to this binary are added too, and
// reported: the owner did not hold them before.
func (s *Store) repairOwner(tx *gorm.DB, w workerRow, tools []string) ([]string, error) {
	var repaired []string
	if w.DismissedAt != nil {
		repaired = append(repaired, fmt.Sprintf("%s was dismissed at %s; it is active again", OwnerWorker, w.DismissedAt.UTC().Format(time.RFC3339)))
	}
	if w.PositionID != OwnerPosition {
		repaired = append(repaired, fmt.Sprintf("%s was in %s; it is back in %s", OwnerWorker, w.PositionID, OwnerPosition))
	}
	if w.DismissedAt != nil || w.PositionID != OwnerPosition {
		if err := tx.Model(&workerRow{}).Where("id = ?", OwnerWorker).
			Updates(map[string]any{"dismissed_at": nil, "position_id": OwnerPosition}).Error; err != nil {
			return nil, err
		}
	}
	var p positionRow
	if err := tx.Where("id = ?", OwnerPosition).Take(&p).Error; err != nil {
		return nil, err
	}
	if p.ReportsTo != nil {
		repaired = append(repaired, fmt.Sprintf("%s reported to %s; it is the root of the chart again", OwnerPosition, *p.ReportsTo))
		if err := tx.Model(&positionRow{}).Where("id = ?", OwnerPosition).Update("reports_to", nil).Error; err != nil {
			return nil, err
		}
	}
	var missing, expiring []string
	for _, t := range tools {
		var g grantRow
		err := tx.Where("worker_id = ? AND tool = ?", OwnerWorker, t).Take(&g).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			missing = append(missing, t)
		case err != nil:
			return nil, err
		case g.ExpiresAt == nil:
			continue
		default:
			expiring = append(expiring, t)
		}
		if err := s.grantTx(tx, "", domain.Grant{WorkerID: OwnerWorker, Tool: t}); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		repaired = append(repaired, fmt.Sprintf("granted %d tool(s) it did not hold: %s", len(missing), strings.Join(missing, ", ")))
	}
	if len(expiring) > 0 {
		repaired = append(repaired, fmt.Sprintf("%d grant(s) had an expiry and now never expire: %s", len(expiring), strings.Join(expiring, ", ")))
	}
	return repaired, nil
}

const ownerRole = `# Owner

You own this organisation. You design its roles, open positions, hire human
and AI workers, connect streams to the outside world and decide who may use
which tools.
`

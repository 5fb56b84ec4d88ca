package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Owner identifiers created by Bootstrap.
const (
	OwnerRole     = "r-owner"
	OwnerPosition = "p-owner"
	OwnerWorker   = "w-owner"
)

// Bootstrap makes sure the owner exists and holds every tool. It is
// idempotent: running it again only adds grants for tools that are new.
func (s *Store) Bootstrap(ctx context.Context, tools []string) (domain.Worker, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
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
			if err := s.audit(tx, Change{Action: "create_position", Target: OwnerPosition, After: p.toDomain()}); err != nil {
				return err
			}
		}
		if ok, err := exists(tx, &workerRow{}, OwnerWorker); err != nil || !ok {
			if err != nil {
				return err
			}
			w := workerRow{ID: OwnerWorker, Kind: string(domain.WorkerHuman), PositionID: OwnerPosition, Name: "Owner",
				Identity: "The organisation's owner.", HiredAt: now}
			if err := tx.Create(&w).Error; err != nil {
				return err
			}
			if err := s.audit(tx, Change{Action: "hire_worker", Target: OwnerWorker, After: w.toDomain()}); err != nil {
				return err
			}
		}
		for _, t := range tools {
			var n int64
			if err := tx.Model(&grantRow{}).Where("worker_id = ? AND tool = ? AND expires_at IS NULL", OwnerWorker, t).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				if err := s.grantTx(tx, "", domain.Grant{WorkerID: OwnerWorker, Tool: t}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return domain.Worker{}, fmt.Errorf("bootstrap: %w", err)
	}
	return s.GetWorker(ctx, OwnerWorker)
}

const ownerRole = `# Owner

You own this organisation. You design its roles, open positions, hire human
and AI workers, connect streams to the outside world and decide who may use
which tools.
`

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

type grantRow struct {
	WorkerID  string     `gorm:"primaryKey"`
	Worker    *workerRow `gorm:"foreignKey:WorkerID"`
	Tool      string     `gorm:"primaryKey"`
	GrantedBy string
	CreatedAt time.Time
	ExpiresAt *time.Time
	// Approval is "required" when calls under the grant wait for a person.
	Approval string `gorm:"not null;default:''"`
}

func (grantRow) TableName() string { return "grants" }

func (r grantRow) toDomain() domain.Grant {
	g := domain.Grant{WorkerID: r.WorkerID, Tool: r.Tool, GrantedBy: r.GrantedBy, CreatedAt: r.CreatedAt.UTC(),
		Approval: domain.GrantApproval(r.Approval)}
	if r.ExpiresAt != nil {
		t := r.ExpiresAt.UTC()
		g.ExpiresAt = &t
	}
	return g
}

// GrantTool lets a worker call a tool, replacing any earlier grant of it.
// The actor grants only to workers below it (never to itself), and only
// what it holds, until no later than its own grant ends (capGrantTx).
func (s *Store) GrantTool(ctx context.Context, actor string, g domain.Grant) (domain.Grant, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
		var w workerRow
		if err := tx.Where("id = ?", g.WorkerID).Take(&w).Error; err != nil {
			return notFoundOr(err, "worker", g.WorkerID)
		}
		if w.DismissedAt != nil {
			return fmt.Errorf("worker %q is dismissed: %w", g.WorkerID, domain.ErrConflict)
		}
		if actor != "" && actor == g.WorkerID {
			return domain.Forbidden("%s cannot grant to itself; a worker above it can", actor)
		}
		if err := newAuthz(tx).manages(actor, g.WorkerID); err != nil {
			return err
		}
		capped, err := s.capGrantTx(tx, actor, g)
		if err != nil {
			return err
		}
		return s.grantTx(tx, actor, capped)
	})
	if err != nil {
		return domain.Grant{}, fmt.Errorf("grant %s to %s: %w", g.Tool, g.WorkerID, err)
	}
	return s.getGrant(ctx, g.WorkerID, g.Tool)
}

// capGrantTx bounds a grant by its granter's own, so grants never grow by
// themselves: the granter must hold the tool now, what it gives ends no
// later than its own grant (the owner's, from bootstrap, never end), and
// waits for approval when its own does, whatever was asked: approval
// follows the tool. The operator ("") is not bound.
func (s *Store) capGrantTx(tx *gorm.DB, actor string, g domain.Grant) (domain.Grant, error) {
	if actor == "" {
		return g, nil
	}
	var own grantRow
	err := tx.Where("worker_id = ? AND tool = ?", actor, g.Tool).Take(&own).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && !own.toDomain().Live(s.Now())) {
		return g, domain.Forbidden("%s cannot grant %q because it does not hold it", actor, g.Tool)
	}
	if err != nil {
		return g, err
	}
	if own.ExpiresAt != nil && (g.ExpiresAt == nil || g.ExpiresAt.After(*own.ExpiresAt)) {
		t := own.ExpiresAt.UTC()
		g.ExpiresAt = &t
	}
	if own.Approval == string(domain.ApprovalRequired) {
		g.Approval = domain.ApprovalRequired
	}
	return g, nil
}

func (s *Store) grantTx(tx *gorm.DB, actor string, g domain.Grant) error {
	var before *domain.Grant
	var prev grantRow
	if err := tx.Where("worker_id = ? AND tool = ?", g.WorkerID, g.Tool).Take(&prev).Error; err == nil {
		d := prev.toDomain()
		before = &d
	}
	if g.ExpiresAt != nil {
		t := g.ExpiresAt.UTC()
		g.ExpiresAt = &t
	}
	row := grantRow{WorkerID: g.WorkerID, Tool: g.Tool, GrantedBy: actor, CreatedAt: s.Now(), ExpiresAt: g.ExpiresAt}
	if g.Approval == domain.ApprovalRequired {
		row.Approval = string(domain.ApprovalRequired)
	}
	if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return err
	}
	c := Change{Action: "grant_tool", Actor: actor, Target: g.WorkerID, After: row.toDomain()}
	if before != nil {
		c.Before = before
	}
	return s.audit(tx, c)
}

func (s *Store) getGrant(ctx context.Context, worker, tool string) (domain.Grant, error) {
	var r grantRow
	if err := s.read(ctx).Where("worker_id = ? AND tool = ?", worker, tool).Take(&r).Error; err != nil {
		return domain.Grant{}, notFoundOr(err, "grant", worker+"/"+tool)
	}
	return r.toDomain(), nil
}

// RevokeTool removes a grant: from a worker below the actor, or from the
// actor itself (giving up a tool is harmless).
func (s *Store) RevokeTool(ctx context.Context, actor, worker, tool string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		if actor != worker {
			if err := newAuthz(tx).manages(actor, worker); err != nil {
				return err
			}
		}
		var prev grantRow
		if err := tx.Where("worker_id = ? AND tool = ?", worker, tool).Take(&prev).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return fmt.Errorf("worker %q holds no grant for %q: %w", worker, tool, domain.ErrNotFound)
			}
			return err
		}
		if err := tx.Delete(&prev).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "revoke_tool", Actor: actor, Target: worker, Before: prev.toDomain()})
	})
	if err != nil {
		return fmt.Errorf("revoke %s from %s: %w", tool, worker, err)
	}
	return nil
}

// ListGrants returns a worker's grants, expired ones included.
func (s *Store) ListGrants(ctx context.Context, worker string) ([]domain.Grant, error) {
	var rows []grantRow
	if err := s.read(ctx).Where("worker_id = ?", worker).Order("tool").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list grants of %s: %w", worker, err)
	}
	return mapRows(rows, grantRow.toDomain), nil
}

// ApprovalRequired reports whether worker's live grant of tool holds its
// calls for approval. No live grant answers false: the grant check refuses
// the call first.
func (s *Store) ApprovalRequired(ctx context.Context, worker, tool string) (bool, error) {
	var n int64
	err := s.read(ctx).Model(&grantRow{}).Where("worker_id = ? AND tool = ? AND approval = ? AND (expires_at IS NULL OR expires_at > ?)",
		worker, tool, string(domain.ApprovalRequired), s.Now()).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("approval of %s's grant of %s: %w", worker, tool, err)
	}
	return n > 0, nil
}

// LiveTools returns the tools a worker may call right now. Expiry is
// checked at read time, so an expired grant vanishes without a restart.
func (s *Store) LiveTools(ctx context.Context, worker string) ([]string, error) {
	g, err := s.liveGrants(ctx, worker)
	return g.tools, err
}

// liveGrantSet is what a worker's live grants allow.
type liveGrantSet struct {
	tools []string // by name
	held  []string // those whose calls wait for approval
	lapse time.Time
}

// liveGrants are worker's live grants, and when the first of them lapses
// (zero: none does).
func (s *Store) liveGrants(ctx context.Context, worker string) (liveGrantSet, error) {
	var rows []struct {
		Tool      string
		Approval  string
		ExpiresAt *time.Time
	}
	err := s.read(ctx).Model(&grantRow{}).Select("tool", "approval", "expires_at").Where("worker_id = ? AND (expires_at IS NULL OR expires_at > ?)", worker, s.Now()).
		Order("tool").Find(&rows).Error
	if err != nil {
		return liveGrantSet{}, fmt.Errorf("live tools of %s: %w", worker, err)
	}
	var g liveGrantSet
	if len(rows) > 0 {
		g.tools = make([]string, len(rows))
	}
	for i, r := range rows {
		g.tools[i] = r.Tool
		if r.Approval == string(domain.ApprovalRequired) {
			g.held = append(g.held, r.Tool)
		}
		if r.ExpiresAt != nil && (g.lapse.IsZero() || r.ExpiresAt.Before(g.lapse)) {
			g.lapse = *r.ExpiresAt
		}
	}
	return g, nil
}

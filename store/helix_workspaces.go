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

// helixWorkspaceRow is one worker's project, app, repository and session
// on Helix (the helix runtime).
type helixWorkspaceRow struct {
	WorkerID  string `gorm:"primaryKey"`
	ProjectID string `gorm:"not null"`
	AppID     string `gorm:"not null;default:''"`
	RepoID    string `gorm:"not null;default:''"`
	SessionID string `gorm:"not null;default:''"`
	SpecsSum  string `gorm:"not null;default:''"`
	UpdatedAt time.Time
}

func (helixWorkspaceRow) TableName() string { return "helix_workspaces" }

// HelixWorkspace returns what the helix runtime made for a worker, or
// ErrNotFound before its first run.
func (s *Store) HelixWorkspace(ctx context.Context, worker string) (domain.HelixWorkspace, error) {
	var r helixWorkspaceRow
	err := s.db.WithContext(ctx).Where("worker_id = ?", worker).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.HelixWorkspace{}, fmt.Errorf("helix workspace of %s: %w", worker, domain.ErrNotFound)
	}
	if err != nil {
		return domain.HelixWorkspace{}, fmt.Errorf("helix workspace of %s: %w", worker, err)
	}
	return domain.HelixWorkspace{WorkerID: r.WorkerID, ProjectID: r.ProjectID, AppID: r.AppID, RepoID: r.RepoID,
		SessionID: r.SessionID, SpecsSum: r.SpecsSum, UpdatedAt: r.UpdatedAt}, nil
}

// PutHelixWorkspace records what the helix runtime made for a worker,
// replacing what was recorded before.
func (s *Store) PutHelixWorkspace(ctx context.Context, w domain.HelixWorkspace) error {
	if w.WorkerID == "" || w.ProjectID == "" {
		return domain.Required("worker and project")
	}
	row := helixWorkspaceRow{WorkerID: w.WorkerID, ProjectID: w.ProjectID, AppID: w.AppID, RepoID: w.RepoID,
		SessionID: w.SessionID, SpecsSum: w.SpecsSum, UpdatedAt: s.Now()}
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("put helix workspace of %s: %w", w.WorkerID, err)
	}
	return nil
}

// SetHelixSession records the session a worker's runs on Helix share
// (empty forgets it), leaving the rest of its workspace as it is.
func (s *Store) SetHelixSession(ctx context.Context, worker, session string) error {
	return s.setHelixColumn(ctx, worker, "session_id", session)
}

// SetHelixSpecsSum records the digest of the role and identity last
// pushed to a worker's helix-specs branch.
func (s *Store) SetHelixSpecsSum(ctx context.Context, worker, sum string) error {
	return s.setHelixColumn(ctx, worker, "specs_sum", sum)
}

// setHelixColumn updates one column, so that a run recording its session
// and a role edit recording its push never overwrite each other.
func (s *Store) setHelixColumn(ctx context.Context, worker, column, value string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&helixWorkspaceRow{}).Where("worker_id = ?", worker).Updates(map[string]any{column: value, "updated_at": s.Now()})
		if res.Error == nil && res.RowsAffected == 0 {
			return fmt.Errorf("helix workspace of %s: %w", worker, domain.ErrNotFound)
		}
		return res.Error
	})
	if err != nil {
		return fmt.Errorf("set %s of the helix workspace of %s: %w", column, worker, err)
	}
	return nil
}

// ForgetHelixWorkspace drops what was recorded of a worker's workspace on
// Helix, once Helix no longer has it, so the next run makes it again.
func (s *Store) ForgetHelixWorkspace(ctx context.Context, worker string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Where("worker_id = ?", worker).Delete(&helixWorkspaceRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("forget the helix workspace of %s: %w", worker, err)
	}
	return nil
}

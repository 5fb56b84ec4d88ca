package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// workspaceRow is an AI worker's workspace: what is attached to it and
// where the last run left it.
type workspaceRow struct {
	WorkerID  string `gorm:"primaryKey"`
	URL       string
	Base      string
	Forge     string
	Project   string
	Source    string
	Dir       string
	Prepared  string
	Head      string
	UpdatedBy string
	UpdatedAt time.Time
	// Label is the encoded join of the labels of the runs that changed it.
	Label string `gorm:"not null;default:''"`
}

func (workspaceRow) TableName() string { return "workspaces" }

func (r workspaceRow) toDomain() domain.Workspace {
	return domain.Workspace{WorkerID: r.WorkerID, URL: r.URL, Base: r.Base, Forge: r.Forge, Project: r.Project, Branch: domain.WorkspaceBranch(r.WorkerID), Source: r.Source, Dir: r.Dir, Prepared: r.Prepared, Head: r.Head, Label: storedLabel(r.Label)}
}

// Workspace is a worker's workspace as last recorded; a worker no run
// has prepared one for yet gets its zero workspace (own repository).
func (s *Store) Workspace(ctx context.Context, worker string) (domain.Workspace, error) {
	var row workspaceRow
	err := s.db.WithContext(ctx).Where("worker_id = ?", worker).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.Workspace{WorkerID: worker, Branch: domain.WorkspaceBranch(worker)}, nil
	}
	if err != nil {
		return domain.Workspace{}, fmt.Errorf("workspace of %s: %w", worker, err)
	}
	return row.toDomain(), nil
}

// Workspaces lists the recorded workspaces, by worker.
func (s *Store) Workspaces(ctx context.Context) ([]domain.Workspace, error) {
	var rows []workspaceRow
	if err := s.db.WithContext(ctx).Order("worker_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	out := make([]domain.Workspace, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.toDomain())
	}
	return out, nil
}

// AttachRepository attaches ws.URL (already checked and cloned to
// ws.Source) to an AI worker actor manages, or to actor itself; an empty
// URL detaches what is attached. The next run of the worker moves its
// current workspace aside (nothing is deleted) and makes the new one.
func (s *Store) AttachRepository(ctx context.Context, actor string, ws domain.Workspace) (domain.Workspace, error) {
	var out workspaceRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		var w workerRow
		if err := tx.Where("id = ?", ws.WorkerID).Take(&w).Error; err != nil {
			return notFoundOr(err, "worker", ws.WorkerID)
		}
		if w.DismissedAt != nil {
			return fmt.Errorf("worker %q is dismissed: %w", ws.WorkerID, domain.ErrConflict)
		}
		if w.Kind != string(domain.WorkerAI) {
			return domain.Invalid("worker", "%s is a human worker; only an AI worker has a workspace", ws.WorkerID)
		}
		if actor != ws.WorkerID {
			if err := newAuthz(tx).manages(actor, ws.WorkerID); err != nil {
				return err
			}
		}
		err := tx.Where("worker_id = ?", ws.WorkerID).Take(&out).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		before := out.URL
		out = workspaceRow{WorkerID: ws.WorkerID, URL: ws.URL, Base: ws.Base, Forge: ws.Forge, Project: ws.Project, Source: ws.Source, Head: out.Head, UpdatedBy: actor, UpdatedAt: s.Now()}
		if err := tx.Save(&out).Error; err != nil {
			return err
		}
		action := "attach_repository"
		if ws.URL == "" {
			action = "detach_repository"
		}
		return s.audit(tx, Change{Action: action, Actor: actor, Target: ws.WorkerID,
			Before: map[string]string{"url": before}, After: map[string]string{"url": ws.URL, "base": ws.Base}})
	})
	if err != nil {
		return domain.Workspace{}, fmt.Errorf("attach repository: %w", err)
	}
	return out.toDomain(), nil
}

// RecordWorkspace records where a run left a worker's workspace: its
// directory, the attachment it was made for (Workspace.Attachment) and
// the commit its branch is at. What is attached is kept.
func (s *Store) RecordWorkspace(ctx context.Context, worker, dir, prepared, head string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&workspaceRow{}).Where("worker_id = ?", worker).Updates(map[string]any{"dir": dir, "prepared": prepared, "head": head, "updated_at": s.Now()})
		if res.Error != nil || res.RowsAffected > 0 {
			return res.Error
		}
		return tx.Create(&workspaceRow{WorkerID: worker, Dir: dir, Prepared: prepared, Head: head, UpdatedBy: worker, UpdatedAt: s.Now()}).Error
	})
	if err != nil {
		return fmt.Errorf("record workspace of %s: %w", worker, err)
	}
	return nil
}

// LabelWorkspace joins a run's label into the label of the worker's
// workspace: its changes are there for every later run to read.
func (s *Store) LabelWorkspace(ctx context.Context, worker string, l domain.Label) error {
	if l.IsZero() {
		return nil
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		var raw []string
		if err := tx.Model(&workspaceRow{}).Where("worker_id = ?", worker).Pluck("label", &raw).Error; err != nil {
			return err
		}
		if len(raw) == 0 {
			return tx.Create(&workspaceRow{WorkerID: worker, Label: l.Encode(), UpdatedBy: worker, UpdatedAt: s.Now()}).Error
		}
		next := storedLabel(raw[0]).Join(l)
		return tx.Model(&workspaceRow{}).Where("worker_id = ?", worker).Update("label", next.Encode()).Error
	})
	if err != nil {
		return fmt.Errorf("label the workspace of %s: %w", worker, err)
	}
	return nil
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

type skillRow struct {
	Name        string `gorm:"primaryKey"`
	Description string `gorm:"not null"`
	InputSchema string `gorm:"not null"`
	Template    string
	Version     int `gorm:"not null"`
	Image       string
	Container   string
	Status      string `gorm:"not null"`
	Error       string
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastUsedAt  *time.Time
	// Label is the label of the run that wrote the serving version's code.
	Label string `gorm:"not null;default:''"`
}

func (skillRow) TableName() string { return "skills" }

func (r skillRow) toDomain() domain.Skill {
	sk := domain.Skill{Name: r.Name, Description: r.Description, InputSchema: json.RawMessage(r.InputSchema), Template: r.Template,
		Version: r.Version, Image: r.Image, Container: r.Container, Status: domain.SkillStatus(r.Status), Error: r.Error,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	sk.Label = storedLabel(r.Label)
	if r.LastUsedAt != nil {
		t := r.LastUsedAt.UTC()
		sk.LastUsedAt = &t
	}
	return sk
}

// SaveSkill records a version of a skill, ready or failed, and puts it on
// the audit trail: a new capability is an org change. The first
// version's creation time is kept, and the first version grants the
// skill's tool to its creator and the owner.
func (s *Store) SaveSkill(ctx context.Context, actor string, sk domain.Skill) (domain.Skill, error) {
	if err := domain.ValidateSkillName(sk.Name); err != nil {
		return domain.Skill{}, err
	}
	if err := s.write(ctx, func(tx *gorm.DB) error { return s.saveSkillTx(tx, actor, "create_skill", sk) }); err != nil {
		return domain.Skill{}, fmt.Errorf("save skill %s: %w", sk.Name, err)
	}
	return s.GetSkill(ctx, sk.Name)
}

// saveSkillTx writes the skill's record and audits it as action.
func (s *Store) saveSkillTx(tx *gorm.DB, actor, action string, sk domain.Skill) error {
	schema := string(sk.InputSchema)
	if schema == "" {
		schema = "{}"
	}
	now := s.Now()
	var prev skillRow
	created, isNew := now, false
	if err := tx.Where("name = ?", sk.Name).Take(&prev).Error; err == nil {
		created = prev.CreatedAt
	} else if errors.Is(err, gorm.ErrRecordNotFound) {
		isNew = true
	} else {
		return err
	}
	label, err := versionLabel(tx, sk.Name, sk.Version)
	if err != nil {
		return err
	}
	row := skillRow{Name: sk.Name, Description: sk.Description, InputSchema: schema, Template: sk.Template, Version: sk.Version,
		Image: sk.Image, Container: sk.Container, Status: string(sk.Status), Error: sk.Error, CreatedBy: sk.CreatedBy,
		CreatedAt: created, UpdatedAt: now, LastUsedAt: sk.LastUsedAt, Label: writtenUnder(tx.Statement.Context, label).Encode()}
	if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return err
	}
	if err := s.audit(tx, Change{Action: action, Actor: actor, Target: sk.Name, After: row.toDomain()}); err != nil {
		return err
	}
	if isNew {
		return s.grantSkillTx(tx, actor, sk)
	}
	return nil
}

// grantSkillTx gives a new skill's tool to its creator and the owner, so
// someone holds it and can grant it on with grant_tool.
func (s *Store) grantSkillTx(tx *gorm.DB, actor string, sk domain.Skill) error {
	for _, w := range slices.Compact([]string{sk.CreatedBy, OwnerWorker}) {
		if ok, err := exists(tx, &workerRow{}, w); err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := s.grantTx(tx, actor, domain.Grant{WorkerID: w, Tool: sk.ToolName()}); err != nil {
			return err
		}
	}
	return nil
}

// GetSkill returns one skill.
func (s *Store) GetSkill(ctx context.Context, name string) (domain.Skill, error) {
	var r skillRow
	if err := s.read(ctx).Where("name = ?", name).Take(&r).Error; err != nil {
		return domain.Skill{}, notFoundOr(err, "skill", name)
	}
	return r.toDomain(), nil
}

// ListSkills returns every skill by name.
func (s *Store) ListSkills(ctx context.Context) ([]domain.Skill, error) {
	var rows []skillRow
	if err := s.read(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	return mapRows(rows, skillRow.toDomain), nil
}

// SetSkillState records where a skill's container is (started, stopped,
// failed) without touching its version; it is not an org change.
func (s *Store) SetSkillState(ctx context.Context, name string, status domain.SkillStatus, container, errText string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&skillRow{}).Where("name = ?", name).
			Updates(map[string]any{"status": string(status), "container": container, "error": errText, "updated_at": s.Now()})
		if res.Error == nil && res.RowsAffected == 0 {
			return domain.NotFound("skill", name)
		}
		return res.Error
	})
	if err != nil {
		return fmt.Errorf("set state of skill %s: %w", name, err)
	}
	return nil
}

// TouchSkill records a call, which restarts the skill's idle clock.
func (s *Store) TouchSkill(ctx context.Context, name string) error {
	now := s.Now()
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Model(&skillRow{}).Where("name = ?", name).Update("last_used_at", &now).Error
	})
	if err != nil {
		return fmt.Errorf("touch skill %s: %w", name, err)
	}
	return nil
}

// DeleteSkill removes a skill, its versions and every grant of its tool, so
// a later skill of the same name starts afresh with no grantees.
func (s *Store) DeleteSkill(ctx context.Context, actor, name string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		var prev skillRow
		if err := tx.Where("name = ?", name).Take(&prev).Error; err != nil {
			return notFoundOr(err, "skill", name)
		}
		if err := tx.Delete(&prev).Error; err != nil {
			return err
		}
		if err := tx.Where("tool = ?", domain.SkillToolPrefix+name).Delete(&grantRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("name = ?", name).Delete(&skillVersionRow{}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "delete_skill", Actor: actor, Target: name, Before: prev.toDomain()})
	})
	if err != nil {
		return fmt.Errorf("delete skill %s: %w", name, err)
	}
	return nil
}

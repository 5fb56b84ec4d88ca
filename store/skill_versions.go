package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// skillVersionRow is one build of a skill: its source as built, its build
// log and what became of it. Versions stay until the skill is deleted, so
// the source of every build can be read back and an old one rebuilt.
type skillVersionRow struct {
	Name        string `gorm:"primaryKey"`
	Version     int    `gorm:"primaryKey;autoIncrement:false"`
	Status      string `gorm:"not null"`
	Error       string
	Description string
	InputSchema string
	Template    string
	Files       string // JSON object: path → content
	Examples    string // JSON array
	BuildLog    string
	CreatedBy   string
	CreatedAt   time.Time
	// Label is the label of the run that wrote this version's code.
	Label string `gorm:"not null;default:''"`
}

func (skillVersionRow) TableName() string { return "skill_versions" }

func (r skillVersionRow) toDomain() domain.SkillVersion {
	v := domain.SkillVersion{Name: r.Name, Version: r.Version, Status: domain.SkillVersionStatus(r.Status), Error: r.Error,
		Description: r.Description, InputSchema: json.RawMessage(r.InputSchema), Template: r.Template, BuildLog: r.BuildLog,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), Label: storedLabel(r.Label)}
	json.Unmarshal([]byte(r.Files), &v.Files)
	json.Unmarshal([]byte(r.Examples), &v.Examples)
	return v
}

// SaveSkillVersion records one build of a skill; a version is recorded
// once, when it is known whether it works.
func (s *Store) SaveSkillVersion(ctx context.Context, v domain.SkillVersion) error {
	files, err := json.Marshal(v.Files)
	if err != nil {
		return fmt.Errorf("save skill %s version %d: %w", v.Name, v.Version, err)
	}
	examples, err := json.Marshal(v.Examples)
	if err != nil {
		return fmt.Errorf("save skill %s version %d: %w", v.Name, v.Version, err)
	}
	row := skillVersionRow{Name: v.Name, Version: v.Version, Status: string(v.Status), Error: v.Error, Description: v.Description,
		InputSchema: string(v.InputSchema), Template: v.Template, Files: string(files), Examples: string(examples),
		BuildLog: v.BuildLog, CreatedBy: v.CreatedBy, CreatedAt: s.Now(), Label: WritingLabel(ctx).Encode()}
	if err := s.write(ctx, func(tx *gorm.DB) error { return tx.Create(&row).Error }); err != nil {
		return fmt.Errorf("save skill %s version %d: %w", v.Name, v.Version, err)
	}
	return nil
}

// SkillVersions lists a skill's versions, oldest first, without their
// files, examples and build logs (GetSkillVersion has them).
func (s *Store) SkillVersions(ctx context.Context, name string) ([]domain.SkillVersion, error) {
	var rows []skillVersionRow
	err := s.read(ctx).Select("name", "version", "status", "error", "description", "template", "created_by", "created_at").
		Where("name = ?", name).Order("version").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list versions of skill %s: %w", name, err)
	}
	return mapRows(rows, skillVersionRow.toDomain), nil
}

// GetSkillVersion returns one version of a skill with its source.
func (s *Store) GetSkillVersion(ctx context.Context, name string, version int) (domain.SkillVersion, error) {
	var r skillVersionRow
	if err := s.read(ctx).Where("name = ? AND version = ?", name, version).Take(&r).Error; err != nil {
		return domain.SkillVersion{}, notFoundOr(err, "skill version", fmt.Sprintf("%s v%d", name, version))
	}
	return r.toDomain(), nil
}

// RollbackSkill makes an earlier version the one serving: the skill's
// record takes sk, and version from is marked rolled back, in one
// transaction on the audit trail.
func (s *Store) RollbackSkill(ctx context.Context, actor string, sk domain.Skill, from int) (domain.Skill, error) {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&skillVersionRow{}).Where("name = ? AND version = ?", sk.Name, from).Update("status", string(domain.VersionRolledBack))
		if res.Error != nil {
			return res.Error
		}
		return s.saveSkillTx(tx, actor, "rollback_skill", sk)
	})
	if err != nil {
		return domain.Skill{}, fmt.Errorf("roll back skill %s: %w", sk.Name, err)
	}
	return s.GetSkill(ctx, sk.Name)
}

// versionLabel is the label of a version's code, if it was recorded: a
// rollback serves the old code with the label it was written under.
func versionLabel(tx *gorm.DB, name string, version int) (domain.Label, error) {
	var raw []string
	if err := tx.Model(&skillVersionRow{}).Where("name = ? AND version = ?", name, version).Pluck("label", &raw).Error; err != nil || len(raw) == 0 {
		return domain.Label{}, err
	}
	return domain.ParseLabel(raw[0])
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// Importer writes records of an exported org as they were — ids, creators
// and times kept — inside Import's one transaction. It bypasses the chart
// rules that guard changes over MCP: an import restores an org, it does
// not act in one. Each kind of record has one method here.
type Importer struct {
	s      *Store
	tx     *gorm.DB
	counts map[string]int
	// changes go on s-org once every record is in: a change's actor
	// must exist when it is appended.
	changes []Change
	// docs numbers imported insights in the full-text index (an import
	// starts from an empty one).
	docs int64
}

// Import runs fn in one transaction on a database holding no org yet (a
// new one: only the s-org stream and, perhaps, settings), so nothing
// stored is ever overwritten, and records it on s-org. References between
// records are checked when fn returns, so they may come in any order. It
// returns how many records of each kind were written.
func (s *Store) Import(ctx context.Context, fn func(*Importer) error) (map[string]int, error) {
	im := &Importer{s: s, counts: map[string]int{}}
	err := s.write(ctx, func(tx *gorm.DB) error {
		im.tx, im.counts, im.changes = tx, map[string]int{}, nil
		if err := s.dia.deferForeignKeys(tx); err != nil {
			return err
		}
		if err := refuseNonEmpty(tx); err != nil {
			return err
		}
		if err := fn(im); err != nil {
			return err
		}
		for _, c := range im.changes {
			if err := s.audit(tx, c); err != nil {
				return err
			}
		}
		return s.audit(tx, Change{Action: "import", Target: "org", After: im.counts})
	})
	s.settings.clear() // it may have set some
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return im.counts, nil
}

// refuseNonEmpty fails when the database already holds an org.
func refuseNonEmpty(tx *gorm.DB) error {
	for _, t := range []struct {
		model any
		what  string
		where string
	}{{&roleRow{}, "roles", ""}, {&positionRow{}, "positions", ""}, {&workerRow{}, "workers", ""},
		{&streamRow{}, "streams", "id <> '" + domain.StreamOrg + "'"}, {&skillRow{}, "skills", ""}, {&insightRow{}, "insights", ""}} {
		q := tx.Model(t.model)
		if t.where != "" {
			q = q.Where(t.where)
		}
		var n int64
		if err := q.Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("the database already holds an org (%d %s); import only into a new one (helix-org import --init --db <new file>): %w", n, t.what, domain.ErrConflict)
		}
	}
	return nil
}

func (im *Importer) create(kind string, row any) error {
	if err := im.tx.Create(row).Error; err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	im.counts[kind]++
	return nil
}

// Role writes a role, and its create_role change on s-org by creator
// (empty: the operator), where the chart rules read a role's creator.
func (im *Importer) Role(r domain.Role, creator string) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("role %s: %w", r.ID, err)
	}
	row := roleRow{ID: r.ID, Title: r.Title, Content: r.Content, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if err := im.create("roles", &row); err != nil {
		return err
	}
	im.changes = append(im.changes, Change{Action: "create_role", Actor: creator, Target: r.ID, After: row.toDomain()})
	return nil
}

// Position writes a position.
func (im *Importer) Position(p domain.Position) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("position %s: %w", p.ID, err)
	}
	row := positionRow{ID: p.ID, RoleID: p.RoleID, Title: p.Title, CreatedAt: p.CreatedAt}
	if p.ReportsTo != "" {
		row.ReportsTo = &p.ReportsTo
	}
	return im.create("positions", &row)
}

// Worker writes a worker, dismissed or not.
func (im *Importer) Worker(w domain.Worker) error {
	if err := w.Validate(); err != nil {
		return fmt.Errorf("worker %s: %w", w.ID, err)
	}
	return im.create("workers", &workerRow{ID: w.ID, Kind: string(w.Kind), PositionID: w.PositionID, Name: w.Name, Identity: w.Identity,
		HiredBy: w.HiredBy, HiredAt: w.HiredAt, DismissedAt: w.DismissedAt})
}

// Grant writes a grant.
func (im *Importer) Grant(g domain.Grant) error {
	if g.WorkerID == "" || g.Tool == "" {
		return fmt.Errorf("grant %s/%s: worker and tool are required: %w", g.WorkerID, g.Tool, domain.ErrInvalid)
	}
	row := &grantRow{WorkerID: g.WorkerID, Tool: g.Tool, GrantedBy: g.GrantedBy, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt}
	if g.Approval == domain.ApprovalRequired {
		row.Approval = string(g.Approval)
	}
	return im.create("grants", row)
}

// Stream writes a stream; its transport config's secrets, given in plain
// text, are encrypted as CreateStream does. s-org, which every database
// has, takes the exported record.
func (im *Importer) Stream(st domain.Stream) error {
	cfg := string(st.Transport.Config)
	if cfg == "" || cfg == "null" {
		cfg = "{}"
	}
	if err := im.s.transports.Validate(st.Transport); err != nil {
		return fmt.Errorf("stream %s: %w", st.ID, err)
	}
	cfg, _, err := im.s.sealConfig(st.Transport.Kind, cfg)
	if err != nil {
		return fmt.Errorf("stream %s: %w", st.ID, err)
	}
	row := streamRow{ID: st.ID, Name: st.Name, Description: st.Description, TransportKind: string(st.Transport.Kind),
		TransportConfig: cfg, CreatedBy: st.CreatedBy, CreatedAt: st.CreatedAt, Private: st.Private, ArchivedAt: st.ArchivedAt}
	if st.ID == domain.StreamOrg {
		im.counts["streams"]++
		return im.tx.Model(&streamRow{}).Where("id = ?", row.ID).Updates(map[string]any{"name": row.Name, "description": row.Description,
			"transport_kind": row.TransportKind, "transport_config": row.TransportConfig, "created_by": row.CreatedBy, "created_at": row.CreatedAt}).Error
	}
	return im.create("streams", &row)
}

// Subscription writes a subscription.
func (im *Importer) Subscription(sub domain.Subscription) error {
	return im.create("subscriptions", &subscriptionRow{WorkerID: sub.WorkerID, StreamID: sub.StreamID, CreatedAt: sub.CreatedAt})
}

// Skill writes a skill and every version of it. No image of it exists on
// this host, so it is marked failed with why until it is built again.
func (im *Importer) Skill(sk domain.Skill, versions []domain.SkillVersion) error {
	if err := domain.ValidateSkillName(sk.Name); err != nil {
		return err
	}
	schema := string(sk.InputSchema)
	if schema == "" {
		schema = "{}"
	}
	if err := im.create("skills", &skillRow{Name: sk.Name, Description: sk.Description, InputSchema: schema, Template: sk.Template,
		Version: sk.Version, Status: string(domain.SkillFailed), CreatedBy: sk.CreatedBy, CreatedAt: sk.CreatedAt, UpdatedAt: im.s.Now(), Label: sk.Label.Encode(),
		Error: "imported: not built on this host yet; build it again with create_skill (get_skill shows its source)"}); err != nil {
		return err
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i].Version < versions[j].Version })
	for _, v := range versions {
		files, err := json.Marshal(v.Files)
		if err != nil {
			return err
		}
		examples, err := json.Marshal(v.Examples)
		if err != nil {
			return err
		}
		if err := im.create("skill versions", &skillVersionRow{Name: sk.Name, Version: v.Version, Status: string(v.Status), Error: v.Error,
			Description: v.Description, InputSchema: string(v.InputSchema), Template: v.Template, Files: string(files),
			Examples: string(examples), CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, Label: v.Label.Encode()}); err != nil {
			return err
		}
	}
	return nil
}

// Setting writes an operational config value, encrypted if secret.
func (im *Importer) Setting(spec domain.SettingSpec, value string) error {
	if err := spec.Check(value); err != nil {
		return err
	}
	if spec.HasSecret() {
		enc, err := im.s.encrypt(value)
		if err != nil {
			return err
		}
		value = enc
	}
	im.counts["settings"]++
	return im.tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&settingRow{Key: spec.Key, Value: value, UpdatedAt: im.s.Now()}).Error
}

// RoleCreator is who created a role (empty: the operator), as its
// create_role change on s-org says.
func (s *Store) RoleCreator(ctx context.Context, role string) (string, error) {
	return roleCreator(s.read(ctx), role)
}

package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// insightRow is one version of an insight. Doc is its row in the
// full-text index (insight_fts's docid), assigned here rather than taken
// from SQLite's implicit rowid, which VACUUM may renumber.
type insightRow struct {
	ID           string  `gorm:"primaryKey"`
	Doc          int64   `gorm:"not null;uniqueIndex"`
	Version      int     `gorm:"not null"`
	Trigger      string  `gorm:"not null"`
	Resolution   string  `gorm:"not null"`
	Type         string  `gorm:"not null"`
	Tags         string  `gorm:"not null"`
	Scope        string  `gorm:"not null;index:idx_insight_scope"`
	Target       string  `gorm:"not null;index:idx_insight_scope"`
	StoredBy     string  `gorm:"not null"`
	Activation   string  `gorm:"not null;index"`
	Supersedes   string  `gorm:"not null"`
	SupersededBy string  `gorm:"not null"`
	Retired      bool    `gorm:"not null"`
	Reason       string  `gorm:"not null"`
	Injected     int     `gorm:"not null"`
	Utilized     int     `gorm:"not null"`
	Helped       int     `gorm:"not null"`
	Failed       int     `gorm:"not null"`
	CreditHelped float64 `gorm:"not null"`
	CreditFailed float64 `gorm:"not null"`
	LastUsed     *time.Time
	CreatedAt    time.Time
	// Label is the storing run's; an untrusted one is quarantined until a
	// person endorses it.
	Label      string `gorm:"not null;default:''"`
	EndorsedBy string `gorm:"not null;default:''"`
	EndorsedAt *time.Time
	// Embedding is the vector of its text (domain.EncodeVector) by
	// EmbeddingModel, for hybrid recall.
	Embedding      []byte
	EmbeddingModel string `gorm:"not null;default:''"`
}

func (insightRow) TableName() string { return "insights" }

func (r insightRow) toDomain() domain.Insight {
	in := domain.Insight{ID: r.ID, Version: r.Version, Trigger: r.Trigger, Resolution: r.Resolution, Type: domain.InsightType(r.Type),
		Tags: strings.Fields(r.Tags), Scope: domain.InsightScope(r.Scope), Target: r.Target, StoredBy: r.StoredBy, Activation: r.Activation,
		Supersedes: r.Supersedes, SupersededBy: r.SupersededBy, Retired: r.Retired, Reason: r.Reason, CreatedAt: r.CreatedAt.UTC(),
		Stats: domain.InsightStats{Injected: r.Injected, Utilized: r.Utilized, Helped: r.Helped, Failed: r.Failed,
			CreditHelped: r.CreditHelped, CreditFailed: r.CreditFailed}}
	if r.LastUsed != nil {
		in.Stats.LastUsed = r.LastUsed.UTC()
	}
	in.Label, in.EndorsedBy = storedLabel(r.Label), r.EndorsedBy
	if r.EndorsedAt != nil {
		t := r.EndorsedAt.UTC()
		in.EndorsedAt = &t
	}
	return in
}

func insightFromDomain(in domain.Insight) insightRow {
	return insightRow{ID: in.ID, Version: in.Version, Trigger: in.Trigger, Resolution: in.Resolution, Type: string(in.Type),
		Tags: strings.Join(in.Tags, " "), Scope: string(in.Scope), Target: in.Target, StoredBy: in.StoredBy, Activation: in.Activation,
		Supersedes: in.Supersedes, Reason: in.Reason, Label: in.Label.Encode(), EndorsedBy: in.EndorsedBy, EndorsedAt: in.EndorsedAt}
}

// insightLinkRow joins two insights; similar links are stored once with
// From < To, led_to links in their direction.
type insightLinkRow struct {
	FromID     string `gorm:"primaryKey"`
	ToID       string `gorm:"primaryKey;index"`
	Kind       string `gorm:"primaryKey"`
	Similarity float64
	CreatedBy  string
	CreatedAt  time.Time
}

func (insightLinkRow) TableName() string { return "insight_links" }

// insightUseRow is one insight in one run: shown to it (by the prompt or
// recall), cited as utilized, and whether the run's outcome was credited.
type insightUseRow struct {
	ActivationID string `gorm:"primaryKey"`
	InsightID    string `gorm:"primaryKey;index"`
	Utilized     bool   `gorm:"not null"`
	Credited     string `gorm:"not null"`
	CreatedAt    time.Time
}

func (insightUseRow) TableName() string { return "insight_uses" }

// migrateInsights creates the insight tables and the full-text index
// (its dialect's: FTS4 on SQLite, a tsvector on PostgreSQL).
func migrateInsights(tx *gorm.DB) error {
	if err := autoMigrate(tx, &insightRow{}, &insightLinkRow{}, &insightUseRow{}, &learnQuestionRow{}); err != nil {
		return err
	}
	return dialectOf(tx).createInsightIndex(tx)
}

// newInsightID is a fresh insight id, from Options.InsightIDs when set.
func (s *Store) newInsightID() string {
	if s.insightIDs == nil {
		return domain.PrefixInsight + domain.RandomSlug(10)
	}
	s.idMu.Lock()
	defer s.idMu.Unlock()
	return domain.PrefixInsight + domain.RandomSlugFrom(s.insightIDs, 10)
}

// StoreInsight stores a new insight as actor (in activation, when a run
// stores it). It links it led_to from every insight the run was shown, and
// similar to current insights whose text overlaps at least threshold.
func (s *Store) StoreInsight(ctx context.Context, actor string, in domain.Insight, threshold float64) (domain.Insight, error) {
	if err := in.Validate(); err != nil {
		return domain.Insight{}, err
	}
	in.ID, in.Version, in.StoredBy, in.Supersedes = s.newInsightID(), 1, actor, ""
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := newAuthz(tx).storesIn(actor, in.Scope, in.Target); err != nil {
			return err
		}
		row, err := s.insertInsight(tx, in)
		if err != nil {
			return err
		}
		in = row.toDomain()
		return s.linkNew(tx, actor, in, threshold)
	})
	return in, err
}

// insertInsight adds the row and its full-text entry. It carries the
// label it is written under (labels.go) and its run's: advice a run drew
// from untrusted data is quarantined, and from what only some may read is
// recalled only by them.
func (s *Store) insertInsight(tx *gorm.DB, in domain.Insight) (insightRow, error) {
	if in.Activation != "" {
		var raw []string
		if err := tx.Model(&activationRow{}).Where("id = ?", in.Activation).Pluck("label", &raw).Error; err != nil {
			return insightRow{}, err
		}
		if len(raw) == 1 {
			in.Label = in.Label.Join(storedLabel(raw[0]))
		}
	}
	in.Label = writtenUnder(tx.Statement.Context, in.Label)
	row := insightFromDomain(in)
	if err := tx.Model(&insightRow{}).Select("COALESCE(MAX(doc), 0) + 1").Scan(&row.Doc).Error; err != nil {
		return row, err
	}
	row.CreatedAt = s.Now()
	if err := s.embedRow(tx.Statement.Context, &row); err != nil {
		return row, err
	}
	if err := tx.Create(&row).Error; err != nil {
		return row, fmt.Errorf("store insight: %w", err)
	}
	return row, s.dia.indexInsight(tx, row)
}

// linkNew adds the automatic links of a freshly stored insight.
func (s *Store) linkNew(tx *gorm.DB, actor string, in domain.Insight, threshold float64) error {
	if in.Activation != "" {
		var shown []string
		if err := tx.Model(&insightUseRow{}).Where("activation_id = ? AND insight_id <> ?", in.Activation, in.ID).Pluck("insight_id", &shown).Error; err != nil {
			return err
		}
		for _, from := range shown {
			if err := s.link(tx, actor, domain.InsightLink{From: from, To: in.ID, Kind: domain.LinkLedTo}); err != nil {
				return err
			}
		}
	}
	if threshold <= 0 {
		return nil
	}
	ranked, err := s.rank(tx, in.Text(), nil, nil, domain.RankBaseline, 10)
	if err != nil {
		return err
	}
	for _, r := range ranked {
		if r.Insight.ID == in.ID {
			continue
		}
		if sim := domain.Similarity(in.Text(), r.Insight.Text()); sim >= threshold {
			if err := s.link(tx, actor, domain.InsightLink{From: r.Insight.ID, To: in.ID, Kind: domain.LinkSimilar, Similarity: sim}); err != nil {
				return err
			}
		}
	}
	return nil
}

// link inserts one link, ignoring one already there.
func (s *Store) link(tx *gorm.DB, actor string, l domain.InsightLink) error {
	if l.Kind == domain.LinkSimilar && l.To < l.From {
		l.From, l.To = l.To, l.From
	}
	row := insightLinkRow{FromID: l.From, ToID: l.To, Kind: string(l.Kind), Similarity: l.Similarity, CreatedBy: actor, CreatedAt: s.Now()}
	return tx.Where(insightLinkRow{FromID: l.From, ToID: l.To, Kind: string(l.Kind)}).FirstOrCreate(&row).Error
}

// GetInsight returns one version of an insight, current or not.
func (s *Store) GetInsight(ctx context.Context, id string) (domain.Insight, error) {
	return getInsight(s.read(ctx), id)
}

func getInsight(tx *gorm.DB, id string) (domain.Insight, error) {
	var r insightRow
	if err := tx.Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Insight{}, notFoundOr(err, "insight", id)
	}
	return r.toDomain(), nil
}

// InsightPatch is a correction: the fields to change (empty keeps), or
// Retire to supersede the insight with nothing.
type InsightPatch struct {
	Trigger, Resolution string
	Type                domain.InsightType
	Tags                []string
	Retire              bool
	Reason              string
}

// CorrectInsight supersedes the current insight id with a corrected new
// version (or retires it), as actor: its author, a worker above the
// author, or the owner. The old version leaves the full-text index, so no
// recall can return it again; it stays in the history.
func (s *Store) CorrectInsight(ctx context.Context, actor, id string, p InsightPatch) (domain.Insight, error) {
	if strings.TrimSpace(p.Reason) == "" {
		return domain.Insight{}, domain.Required("reason")
	}
	var out domain.Insight
	err := s.write(ctx, func(tx *gorm.DB) error {
		old, err := getInsight(tx, id)
		if err != nil {
			return err
		}
		if !old.Current() {
			return fmt.Errorf("insight %s was superseded by %q (retired: %v); correct the current version: %w", id, old.SupersededBy, old.Retired, domain.ErrConflict)
		}
		if err := newAuthz(tx).corrects(actor, old); err != nil {
			return err
		}
		next := corrected(old, p, s.newInsightID())
		if err := next.Validate(); err != nil {
			return err
		}
		if err := s.dia.unindexInsight(tx, id); err != nil {
			return err
		}
		if p.Retire {
			out = old
			out.Retired, out.Reason = true, p.Reason
			return tx.Model(&insightRow{}).Where("id = ?", id).Updates(map[string]any{"retired": true, "reason": p.Reason}).Error
		}
		row, err := s.insertInsight(tx, next)
		if err != nil {
			return err
		}
		out = row.toDomain()
		return tx.Model(&insightRow{}).Where("id = ?", id).Update("superseded_by", row.ID).Error
	})
	return out, err
}

// corrected is the next version of old, as id, with p's changes.
func corrected(old domain.Insight, p InsightPatch, id string) domain.Insight {
	next := old
	next.ID, next.Version, next.Supersedes, next.Reason = id, old.Version+1, old.ID, p.Reason
	next.Stats = domain.InsightStats{}
	if p.Trigger != "" {
		next.Trigger = p.Trigger
	}
	if p.Resolution != "" {
		next.Resolution = p.Resolution
	}
	if p.Type != "" {
		next.Type = p.Type
	}
	if p.Tags != nil {
		next.Tags = p.Tags
	}
	return next
}

// LinkInsights links two insights by hand, as a worker who may recall
// both.
func (s *Store) LinkInsights(ctx context.Context, actor string, l domain.InsightLink) error {
	if err := l.Kind.Validate("kind"); err != nil {
		return err
	}
	if l.From == l.To {
		return domain.Invalid("to", "an insight cannot link to itself (%s)", l.From)
	}
	return s.write(ctx, func(tx *gorm.DB) error {
		a := newAuthz(tx)
		for _, id := range []string{l.From, l.To} {
			in, err := getInsight(tx, id)
			if err != nil {
				return err
			}
			if err := a.seesInsight(actor, in); err != nil {
				return err
			}
		}
		if l.Kind == domain.LinkSimilar {
			l.Similarity = -1 // set by hand, not measured
		}
		return s.link(tx, actor, l)
	})
}

// InsightLinks lists the links touching id.
func (s *Store) InsightLinks(ctx context.Context, id string) ([]domain.InsightLink, error) {
	var rows []insightLinkRow
	if err := s.read(ctx).Where("from_id = ? OR to_id = ?", id, id).Order("created_at, from_id, to_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("links of %s: %w", id, err)
	}
	out := make([]domain.InsightLink, len(rows))
	for i, r := range rows {
		out[i] = domain.InsightLink{From: r.FromID, To: r.ToID, Kind: domain.InsightLinkKind(r.Kind), Similarity: r.Similarity}
	}
	return out, nil
}

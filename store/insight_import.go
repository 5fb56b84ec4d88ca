package store

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// Insight writes an insight version as exported — id, author, counters
// and times kept; a current one goes into the full-text index too.
func (im *Importer) Insight(in domain.Insight) error {
	if err := in.Validate(); err != nil {
		return fmt.Errorf("insight %s: %w", in.ID, err)
	}
	if err := domain.ValidateID("id", domain.PrefixInsight, in.ID); err != nil {
		return fmt.Errorf("insight %s: %w", in.ID, err)
	}
	row := insightFromDomain(in)
	row.SupersededBy, row.Retired, row.CreatedAt = in.SupersededBy, in.Retired, in.CreatedAt
	st := in.Stats
	row.Injected, row.Utilized, row.Helped, row.Failed, row.CreditHelped, row.CreditFailed = st.Injected, st.Utilized, st.Helped, st.Failed, st.CreditHelped, st.CreditFailed
	if !st.LastUsed.IsZero() {
		row.LastUsed = &st.LastUsed
	}
	im.docs++
	row.Doc = im.docs
	if err := im.s.embedRow(im.tx.Statement.Context, &row); err != nil {
		return fmt.Errorf("insight %s: %w", in.ID, err)
	}
	if err := im.create("insights", &row); err != nil {
		return err
	}
	for _, c := range beforeLedger(row) {
		if err := im.tx.Create(&c).Error; err != nil {
			return fmt.Errorf("insight %s: %w", in.ID, err)
		}
	}
	if !in.Current() {
		return nil
	}
	return im.s.dia.indexInsight(im.tx, row)
}

// InsightLink writes a link between two imported insights.
func (im *Importer) InsightLink(l domain.InsightLink, createdBy string) error {
	if err := l.Kind.Validate("kind"); err != nil {
		return fmt.Errorf("insight link %s→%s: %w", l.From, l.To, err)
	}
	return im.create("insight links", &insightLinkRow{FromID: l.From, ToID: l.To, Kind: string(l.Kind), Similarity: l.Similarity, CreatedBy: createdBy, CreatedAt: im.s.Now()})
}

// ExportInsights returns every version of every insight, oldest first,
// and every link, for an export.
func (s *Store) ExportInsights(ctx context.Context) ([]domain.Insight, []domain.InsightLink, error) {
	var rows []insightRow
	if err := s.read(ctx).Order("doc").Find(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("export insights: %w", err)
	}
	var links []insightLinkRow
	if err := s.read(ctx).Order("created_at, from_id, to_id, kind").Find(&links).Error; err != nil {
		return nil, nil, fmt.Errorf("export insight links: %w", err)
	}
	out := make([]domain.InsightLink, len(links))
	for i, l := range links {
		out[i] = domain.InsightLink{From: l.FromID, To: l.ToID, Kind: domain.InsightLinkKind(l.Kind), Similarity: l.Similarity}
	}
	return mapRows(rows, insightRow.toDomain), out, nil
}

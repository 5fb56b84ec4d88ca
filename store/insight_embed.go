package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// embedRow sets row's embedding from its text with the store's embedder.
func (s *Store) embedRow(ctx context.Context, row *insightRow) error {
	vs, err := s.embedder.Embed(ctx, []string{row.toDomain().Text()})
	if err != nil {
		return fmt.Errorf("embed insight: %w", err)
	}
	row.Embedding, row.EmbeddingModel = domain.EncodeVector(vs[0]), s.embedder.Model()
	return nil
}

// migrateEmbeddings adds the embedding columns and fills them for the
// insights stored before, with the local embedder (a store told to use
// another compares its vectors only with vectors of its model).
func migrateEmbeddings(tx *gorm.DB) error {
	if err := tx.AutoMigrate(&insightRow{}); err != nil {
		return err
	}
	e := domain.LocalEmbedder
	for {
		var rows []insightRow
		if err := tx.Select("id", "trigger", "resolution", "tags").Where("embedding_model = ''").Order("id").Limit(500).Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		for _, r := range rows {
			vs, err := e.Embed(tx.Statement.Context, []string{r.toDomain().Text()})
			if err != nil {
				return err
			}
			if err := tx.Model(&insightRow{}).Where("id = ?", r.ID).Updates(map[string]any{"embedding": domain.EncodeVector(vs[0]), "embedding_model": e.Model()}).Error; err != nil {
				return err
			}
		}
	}
}

// semantics sets each hybrid candidate's cosine with the query's vector,
// reading the vectors of the candidates by id (the search that found them
// did not read them). Vectors of another model count as unlike.
func (s *Store) semantics(tx *gorm.DB, query []float32, cands []domain.Candidate) error {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.Insight.ID
	}
	var rows []struct {
		ID             string
		Embedding      []byte
		EmbeddingModel string
	}
	if err := tx.Model(&insightRow{}).Select("id", "embedding", "embedding_model").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return fmt.Errorf("load insight embeddings: %w", err)
	}
	model := s.embedder.Model()
	sem := make(map[string]float64, len(rows))
	var v []float32
	for _, r := range rows {
		if r.EmbeddingModel == model {
			v = domain.DecodeVector(v, r.Embedding)
			sem[r.ID] = domain.Cosine(query, v)
		}
	}
	for i := range cands {
		cands[i].Hybrid, cands[i].Semantic = true, sem[cands[i].Insight.ID]
	}
	return nil
}

// embedQuery is the query's vector for a hybrid recall.
func (s *Store) embedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := s.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return vs[0], nil
}

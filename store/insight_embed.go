package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

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
	if err := autoMigrate(tx, &insightRow{}); err != nil {
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

// ProviderEmbedder makes the provider's embedder for a model; cmd sets it
// (SetProviderEmbedder) with the provider's URL, key and client, which the
// store never reads itself.
type ProviderEmbedder func(ctx context.Context, model string) (domain.Embedder, error)

// SetProviderEmbedder sets how memory.embeddings=provider embeds.
func (s *Store) SetProviderEmbedder(f ProviderEmbedder) { s.provider.Store(&f) }

// queryVec is a hybrid recall's query vector: its model, and whether
// the recall also takes the insights nearest by cosine alone (near: a
// provider's vectors carry meaning; the local trigrams only re-score
// lexical matches).
type queryVec struct {
	v     []float32
	model string
	near  bool
}

// embedTimeout bounds one call of the provider's embeddings.
const embedTimeout = 10 * time.Second

// reembedBatch is how many insights of another model one recall re-embeds.
const reembedBatch = 64

// hybridQuery embeds a recall's query with the embedder memory.embeddings
// picks. A provider that fails leaves the recall lexical: the failure is
// logged and nil returned, never an error.
func (s *Store) hybridQuery(ctx context.Context, text string) *queryVec {
	mode, err := s.SettingOr(ctx, domain.EmbeddingsSetting)
	if err != nil || mode != domain.EmbeddingsProvider {
		vs, _ := s.embedder.Embed(ctx, []string{text})
		return &queryVec{v: vs[0], model: s.embedder.Model()}
	}
	emb, err := s.providerEmbedder(ctx)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, embedTimeout)
		defer cancel()
		if err = s.reembed(ctx, emb); err == nil {
			var vs [][]float32
			if vs, err = emb.Embed(ctx, []string{text}); err == nil {
				return &queryVec{v: vs[0], model: emb.Model(), near: true}
			}
		}
	}
	s.log.Warn("provider embeddings failed; recall ranks by BM25 alone", "err", err)
	return nil
}

// providerEmbedder is the provider's embedder for memory.embedding_model.
func (s *Store) providerEmbedder(ctx context.Context) (domain.Embedder, error) {
	f := s.provider.Load()
	if f == nil {
		return nil, fmt.Errorf("memory.embeddings is provider but this process has no provider")
	}
	model, err := s.SettingOr(ctx, domain.EmbeddingModelSetting)
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, fmt.Errorf("memory.embedding_model is empty")
	}
	return (*f)(ctx, model)
}

// reembed gives up to reembedBatch current insights whose vector is of
// another model one of emb's, so changing the embedder moves the memory
// to the new space a batch per recall and never compares vectors of two
// models. Insights are written with the local vector (no network call
// inside a write); in provider mode the next recalls re-embed them.
func (s *Store) reembed(ctx context.Context, emb domain.Embedder) error {
	model := emb.Model()
	var rows []insightRow
	if err := s.read(ctx).Select("id", "trigger", "resolution", "tags", "embedding_model").
		Where("superseded_by = '' AND NOT retired AND embedding_model <> ?", model).Order("doc").Limit(reembedBatch).Find(&rows).Error; err != nil {
		return fmt.Errorf("find insights to re-embed: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = r.toDomain().Text()
	}
	vs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("re-embed %d insights: %w", len(rows), err)
	}
	return s.write(ctx, func(tx *gorm.DB) error {
		for i, r := range rows {
			// Only if no one re-embedded it meanwhile; the text of a
			// version never changes (a correction is a new version).
			if err := tx.Model(&insightRow{}).Where("id = ? AND embedding_model = ?", r.ID, r.EmbeddingModel).
				Updates(map[string]any{"embedding": domain.EncodeVector(vs[i]), "embedding_model": model}).Error; err != nil {
				return fmt.Errorf("store re-embedded insight %s: %w", r.ID, err)
			}
		}
		return nil
	})
}

// nearHit is an insight near the query by cosine alone.
type nearHit struct {
	ID     string
	Doc    int64
	Cosine float64
}

// nearest returns up to k current insights seat sees whose vector of
// qv's model has a cosine of at least domain.NearestMinCosine with the
// query, nearest first: the paraphrases a lexical search cannot find. It
// reads every such vector (a provider's embeddings are opt-in; the cost
// grows with the memory).
func (s *Store) nearest(tx *gorm.DB, qv *queryVec, seat *domain.InsightSeat, k int) ([]nearHit, error) {
	where, args := "i.embedding_model = ? AND i.superseded_by = '' AND NOT i.retired", []any{qv.model}
	if seat != nil {
		cond, more := seatCondition(seat)
		where += " AND " + cond
		args = append(args, more...)
	}
	rows, err := tx.Raw("SELECT i.id, i.doc, i.embedding, i.label FROM insights i WHERE "+where, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("search insights by embedding: %w", err)
	}
	defer rows.Close()
	var (
		out   []nearHit
		blob  []byte
		label string
		v     []float32
	)
	for n := 0; rows.Next(); n++ {
		if err := watchRows(tx.Statement.Context, n); err != nil {
			return nil, fmt.Errorf("search insights by embedding: %w", err)
		}
		var h nearHit
		if err := rows.Scan(&h.ID, &h.Doc, &blob, &label); err != nil {
			return nil, fmt.Errorf("search insights by embedding: %w", err)
		}
		if !readableBy(seat, label) {
			continue
		}
		v = domain.DecodeVector(v, blob)
		if h.Cosine = domain.Cosine(qv.v, v); h.Cosine < domain.NearestMinCosine {
			continue
		}
		out = append(out, h)
		if len(out) > 4*k {
			out = topNear(out, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search insights by embedding: %w", err)
	}
	return topNear(out, k), nil
}

func topNear(hs []nearHit, k int) []nearHit {
	slices.SortFunc(hs, func(a, b nearHit) int {
		if c := cmp.Compare(b.Cosine, a.Cosine); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return hs[:min(k, len(hs))]
}

// maxIDParams bounds the ids bound in one IN list: PostgreSQL takes at
// most 65,535 parameters in a statement.
var maxIDParams = 10000

// semantics sets each hybrid candidate's cosine with the query's vector,
// reading the vectors of the candidates by id, in chunks (the search
// that found them did not read them, and a broad query matches more
// insights than one statement can name). Vectors of another model count
// as unlike.
func (s *Store) semantics(tx *gorm.DB, qv *queryVec, cands []domain.Candidate) error {
	sem := make(map[string]float64, len(cands))
	var v []float32
	for from := 0; from < len(cands); from += maxIDParams {
		chunk := cands[from:min(from+maxIDParams, len(cands))]
		ids := make([]string, len(chunk))
		for i, c := range chunk {
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
		for _, r := range rows {
			if r.EmbeddingModel == qv.model {
				v = domain.DecodeVector(v, r.Embedding)
				sem[r.ID] = domain.Cosine(qv.v, v)
			}
		}
	}
	for i := range cands {
		cands[i].Hybrid, cands[i].Semantic = true, sem[cands[i].Insight.ID]
	}
	return nil
}

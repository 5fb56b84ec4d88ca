package store

import (
	"database/sql"
	"encoding/binary"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// rank returns the best limit current insights matching any of text's
// terms that seat sees (all, when nil). Matching and scoring read only
// what the score needs; the full rows are loaded for the results alone,
// which keeps a recall over many matches cheap.
func (s *Store) rank(tx *gorm.DB, text string, seat *domain.InsightSeat, mode domain.RankMode, limit int) ([]domain.Ranked, error) {
	cands, err := s.search(tx, text, seat)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	ranked := domain.Rank(mode, cands, s.Now(), limit)
	ids := make([]string, len(ranked))
	for i, r := range ranked {
		ids[i] = r.Insight.ID
	}
	var rows []insightRow
	if err := tx.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load recalled insights: %w", err)
	}
	full := map[string]domain.Insight{}
	for _, r := range rows {
		full[r.ID] = r.toDomain()
	}
	for i := range ranked {
		ranked[i].Insight = full[ranked[i].Insight.ID]
	}
	return ranked, nil
}

// search scores every match by BM25 and returns it with what ranking
// reads: id, scope, counters and times.
func (s *Store) search(tx *gorm.DB, text string, seat *domain.InsightSeat) ([]domain.Candidate, error) {
	terms := domain.Terms(text)
	if len(terms) == 0 {
		return nil, nil
	}
	return s.dia.searchInsights(tx, terms, seat)
}

// matchInfo decodes FTS4's matchinfo 'pcnalx' blobs: phrases, columns,
// rows, average and this row's column lengths, then per phrase and column
// three counts (hits here, hits everywhere, rows with a hit). The corpus
// part is the same for every row of a query, so it is read once, and the
// per-row buffers are reused: a recall may score thousands of matches.
type matchInfo struct {
	blob   []byte
	corpus domain.CorpusStats
	hits   domain.FieldHits
}

func (m *matchInfo) scan(rows *sql.Rows) (domain.Candidate, error) {
	var (
		in       domain.Insight
		scope    string
		lastUsed sql.NullTime
	)
	st := &in.Stats
	if err := rows.Scan(&in.ID, &scope, &in.Target, &st.Helped, &st.Failed, &st.CreditHelped, &st.CreditFailed, &lastUsed, &in.CreatedAt, &m.blob); err != nil {
		return domain.Candidate{}, err
	}
	in.Scope = domain.InsightScope(scope)
	if lastUsed.Valid {
		st.LastUsed = lastUsed.Time.UTC()
	}
	in.CreatedAt = in.CreatedAt.UTC()
	if err := m.decode(); err != nil {
		return domain.Candidate{}, err
	}
	return domain.Candidate{Insight: in, BM25: domain.BM25(m.corpus, m.hits)}, nil
}

func (m *matchInfo) at(i int) int { return int(binary.NativeEndian.Uint32(m.blob[4*i:])) }

func (m *matchInfo) decode() error {
	n := len(m.blob) / 4
	if n < 3 {
		return fmt.Errorf("matchinfo: %d values", n)
	}
	p, c := m.at(0), m.at(1)
	if n != 3+2*c+3*p*c {
		return fmt.Errorf("matchinfo: %d values for %d phrases, %d columns", n, p, c)
	}
	if m.corpus.DF == nil {
		m.corpus = domain.CorpusStats{Docs: m.at(2), AvgLen: make([]float64, c), DF: make([][]int, p)}
		m.hits = domain.FieldHits{Len: make([]int, c), TF: make([][]int, p)}
		for f := range c {
			m.corpus.AvgLen[f] = float64(m.at(3 + f))
		}
		for t := range p {
			m.corpus.DF[t], m.hits.TF[t] = make([]int, c), make([]int, c)
			for f := range c {
				m.corpus.DF[t][f] = m.at(3 + 2*c + 3*(t*c+f) + 2)
			}
		}
	}
	for f := range c {
		m.hits.Len[f] = m.at(3 + c + f)
	}
	for t := range p {
		for f := range c {
			m.hits.TF[t][f] = m.at(3 + 2*c + 3*(t*c+f))
		}
	}
	return nil
}

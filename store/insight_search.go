package store

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// rank returns the best limit current insights matching any of text's
// terms that seat sees (all, when nil). It scores every match by BM25
// from the full-text index alone, then reads what the rest of the score
// needs (counters, times) best match first and only for as many as can
// still reach the top (domain.RankMatches), and the full rows for the
// results alone: a recall over many matches stays cheap. With a query
// vector (hybrid) relevance blends in each match's cosine with it.
func (s *Store) rank(tx *gorm.DB, text string, qv *queryVec, seat *domain.InsightSeat, mode domain.RankMode, limit int) ([]domain.Ranked, error) {
	ranked, err := s.rankMatches(tx, text, qv, seat, mode, limit)
	if err != nil || len(ranked) == 0 {
		return nil, err
	}
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

// rankMatches ranks the matches: on SQLite by scoring all from the
// full-text index and loading the rest only for those that can still
// reach the top; on PostgreSQL from its dialect's one search. With a
// provider's vector (qv.near) the insights nearest the query by cosine
// join the matches with no BM25: paraphrases that share no word with it.
func (s *Store) rankMatches(tx *gorm.DB, text string, qv *queryVec, seat *domain.InsightSeat, mode domain.RankMode, limit int) ([]domain.Ranked, error) {
	var near []nearHit
	if qv != nil && qv.near {
		var err error
		if near, err = s.nearest(tx, qv, seat, limit); err != nil {
			return nil, err
		}
	}
	if _, ok := s.dia.(sqliteDialect); !ok {
		var cands []domain.Candidate
		if terms := domain.Terms(text); len(terms) > 0 {
			var err error
			if cands, err = s.dia.searchInsights(tx, terms, seat); err != nil {
				return nil, err
			}
		}
		if qv != nil {
			if err := s.semantics(tx, qv, cands); err != nil {
				return nil, err
			}
		}
		cands, err := s.addNear(tx, cands, near)
		if err != nil || len(cands) == 0 {
			return nil, err
		}
		return domain.Rank(mode, cands, s.Now(), limit), nil
	}
	matches, err := s.matchInsights(tx, text)
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(matches))
	for _, m := range matches {
		seen[m.Doc] = true
	}
	for _, h := range near {
		if !seen[h.Doc] {
			matches = append(matches, domain.Match{Doc: h.Doc})
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	for i := range matches {
		matches[i].Hybrid = qv != nil
	}
	return domain.RankMatches(mode, matches, func(dst []domain.Candidate, ms []domain.Match) ([]domain.Candidate, error) {
		return s.loadCandidates(tx, dst, ms, seat, qv)
	}, s.Now(), limit)
}

// addNear appends to cands, with no BM25, the near hits not among them.
func (s *Store) addNear(tx *gorm.DB, cands []domain.Candidate, near []nearHit) ([]domain.Candidate, error) {
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		seen[c.Insight.ID] = true
	}
	cos := map[string]float64{}
	var ids []string
	for _, h := range near {
		if !seen[h.ID] {
			ids, cos[h.ID] = append(ids, h.ID), h.Cosine
		}
	}
	if len(ids) == 0 {
		return cands, nil
	}
	var rows []insightRow
	if err := tx.Omit("embedding").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load insights near the query: %w", err)
	}
	for _, r := range rows {
		cands = append(cands, domain.Candidate{Insight: r.toDomain(), Hybrid: true, Semantic: cos[r.ID]})
	}
	return cands, nil
}

// matchSQL finds the insights holding any of the query's terms. The
// full-text index holds current insights only: a correction or a
// retirement takes the old version out.
const matchSQL = "SELECT docid, matchinfo(insight_fts, 'pcnalx') FROM insight_fts WHERE insight_fts MATCH ?"

// matchInsights scores by BM25 every insight that holds one of text's
// terms.
func (s *Store) matchInsights(tx *gorm.DB, text string) ([]domain.Match, error) {
	terms := domain.Terms(text)
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := s.queryFixed(tx, matchSQL, `"`+strings.Join(terms, `" OR "`)+`"`)
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	defer rows.Close()
	var (
		out []domain.Match
		mi  matchInfo
	)
	for n := 0; rows.Next(); n++ {
		if err := watchRows(tx.Statement.Context, n); err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		var (
			m    domain.Match
			blob sql.RawBytes
		)
		if err := rows.Scan(&m.Doc, &blob); err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		mi.blob = blob
		if err := mi.decode(); err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		m.BM25 = domain.BM25(mi.corpus, mi.hits)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	return out, nil
}

// Candidate queries: the matches come as one JSON array, so the text of
// each query is fixed. The unary + keeps SQLite from reading the scope
// index for the OR (a scan of every insight in the seat's scopes)
// instead of looking the matches up by doc.
// A hybrid recall reads each candidate's vector too.
const (
	candidateCols     = `doc, id, helped, failed, credit_helped, credit_failed, last_used, created_at, label`
	candidatesWhere   = ` FROM insights WHERE doc IN (SELECT value FROM json_each(?)) AND superseded_by = '' AND NOT retired`
	seatWhere         = ` AND (+scope = 'org' OR (+scope = 'role' AND +target = ?) OR (+scope = 'position' AND +target = ?) OR (+scope = 'worker' AND +target = ?))`
	candidatesSQL     = `SELECT ` + candidateCols + candidatesWhere
	seatCandidatesSQL = candidatesSQL + seatWhere
	hybridSQL         = `SELECT ` + candidateCols + `, embedding, embedding_model` + candidatesWhere
	seatHybridSQL     = hybridSQL + seatWhere
)

// loadCandidates appends to dst what ranking reads (id, counters, times)
// of the matches seat sees (all, when nil), and with a query vector each
// one's cosine with it.
func (s *Store) loadCandidates(tx *gorm.DB, dst []domain.Candidate, ms []domain.Match, seat *domain.InsightSeat, qv *queryVec) ([]domain.Candidate, error) {
	docs := make([]byte, 0, 8*len(ms)+2)
	bm25 := make(map[int64]float64, len(ms))
	for i, m := range ms {
		docs = append(docs, "[,"[min(i, 1)])
		docs = strconv.AppendInt(docs, m.Doc, 10)
		bm25[m.Doc] = m.BM25
	}
	docs = append(docs, ']')
	q, args := candidatesSQL, []any{string(docs)}
	if qv != nil {
		q = hybridSQL
	}
	if seat != nil {
		q, args = seatCandidatesSQL, append(args, seat.Role, seat.Position, seat.Worker)
		if qv != nil {
			q = seatHybridSQL
		}
	}
	var (
		blob     sql.RawBytes
		embModel string
		v        []float32
	)
	rows, err := s.queryFixed(tx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("load insight candidates: %w", err)
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		if err := watchRows(tx.Statement.Context, n); err != nil {
			return nil, fmt.Errorf("load insight candidates: %w", err)
		}
		var (
			doc      int64
			lastUsed sql.NullTime
			label    string
		)
		dst = append(dst, domain.Candidate{})
		c := &dst[len(dst)-1]
		in, st := &c.Insight, &c.Insight.Stats
		dest := []any{&doc, &in.ID, &st.Helped, &st.Failed, &st.CreditHelped, &st.CreditFailed, &lastUsed, &in.CreatedAt, &label}
		if qv != nil {
			dest = append(dest, &blob, &embModel)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("load insight candidates: %w", err)
		}
		if qv != nil {
			c.Hybrid, c.Semantic = true, 0
			if embModel == qv.model {
				v = domain.DecodeVector(v, blob)
				c.Semantic = domain.Cosine(qv.v, v)
			}
		}
		if !readableBy(seat, label) {
			dst = dst[:len(dst)-1]
			continue
		}
		// Ranking reads it: a quarantined insight takes no part in others' relevance.
		in.Label = storedLabel(label)
		if lastUsed.Valid {
			st.LastUsed = lastUsed.Time.UTC()
		}
		in.CreatedAt = in.CreatedAt.UTC()
		c.BM25 = bm25[doc]
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load insight candidates: %w", err)
	}
	return dst, nil
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

// scan reads one row of the dialect's full search (id, scope, target,
// counters, times, label, matchinfo) into a scored candidate and its
// stored label.
func (m *matchInfo) scan(rows *sql.Rows) (domain.Candidate, string, error) {
	var (
		in       domain.Insight
		scope    string
		lastUsed sql.NullTime
		label    string
	)
	st := &in.Stats
	if err := rows.Scan(&in.ID, &scope, &in.Target, &st.Helped, &st.Failed, &st.CreditHelped, &st.CreditFailed, &lastUsed, &in.CreatedAt, &label, &m.blob); err != nil {
		return domain.Candidate{}, "", err
	}
	in.Scope = domain.InsightScope(scope)
	if lastUsed.Valid {
		st.LastUsed = lastUsed.Time.UTC()
	}
	in.CreatedAt = in.CreatedAt.UTC()
	if err := m.decode(); err != nil {
		return domain.Candidate{}, "", err
	}
	return domain.Candidate{Insight: in, BM25: domain.BM25(m.corpus, m.hits)}, label, nil
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

// readableBy says whether the worker of seat (any, when nil) may recall an
// insight with the stored label: one stored by a run that had read what
// only some may read is recalled only by them.
func readableBy(seat *domain.InsightSeat, label string) bool {
	if seat == nil || label == "" {
		return true
	}
	return storedLabel(label).Within([]string{seat.Worker})
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// MaxRecall bounds how many insights one recall returns.
const MaxRecall = 50

// RecallQuery is one recall: the words to match, how many results, the
// ranking mode (learned unless set), whether to follow links one hop, and
// the run it serves (its results count as shown to that run).
type RecallQuery struct {
	Query      string
	Limit      int
	Mode       domain.RankMode
	Follow     bool
	Activation string
	// Hybrid blends the cosine of the query's and each insight's
	// embedding into relevance (memory.hybrid).
	Hybrid bool
}

// Recalled is a ranked insight; Via names the result it was reached from
// by a link when Follow brought it in.
type Recalled struct {
	domain.Ranked
	Via     string
	ViaKind domain.InsightLinkKind
}

// Recall ranks the current insights reader may see (org, its role, its
// position, itself) against q; quarantined advice, shown marked only to a
// run that asks until a person endorses it, comes after the rest however
// it scores (domain.Rank). With an activation the results are
// recorded as shown to that run: their outcome credits them only if the
// run cites them as utilized.
func (s *Store) Recall(ctx context.Context, reader string, q RecallQuery) ([]Recalled, error) {
	if len(domain.Terms(q.Query)) == 0 {
		return nil, domain.Invalid("query", "has no words to search for (one-letter words and words like \"the\" are skipped); got %q", q.Query)
	}
	if q.Limit == 0 {
		q.Limit = 5
	}
	if q.Limit < 0 || q.Limit > MaxRecall {
		return nil, domain.Invalid("limit", "from 1 to %d (default 5); got %d", MaxRecall, q.Limit)
	}
	if q.Mode == "" {
		q.Mode = domain.RankLearned
	}
	tx := s.read(ctx)
	seat, err := insightSeat(tx, reader)
	if err != nil {
		return nil, err
	}
	var qv *queryVec
	if q.Hybrid {
		qv = s.hybridQuery(ctx, q.Query)
	}
	ranked, err := s.rank(tx, q.Query, qv, &seat, q.Mode, q.Limit)
	if err != nil {
		return nil, err
	}
	var out []Recalled
	for _, r := range ranked {
		out = append(out, Recalled{Ranked: r})
	}
	if q.Follow {
		if out, err = s.follow(tx, seat, q.Mode, out); err != nil {
			return nil, err
		}
	}
	if q.Activation != "" && len(out) > 0 {
		ids := make([]string, len(out))
		for i, r := range out {
			ids[i] = r.Insight.ID
		}
		if err := s.ShowInsights(ctx, q.Activation, ids); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// follow adds, after the results, the current insights linked to them
// that seat sees and that are not results already, marked with the link.
func (s *Store) follow(tx *gorm.DB, seat domain.InsightSeat, mode domain.RankMode, res []Recalled) ([]Recalled, error) {
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.Insight.ID
	}
	var links []insightLinkRow
	if err := tx.Where("from_id IN ? OR to_id IN ?", ids, ids).Order("created_at, from_id, to_id").Find(&links).Error; err != nil {
		return nil, fmt.Errorf("follow links: %w", err)
	}
	out := res
	for _, l := range links {
		via, other := l.FromID, l.ToID
		if slices.Contains(ids, other) {
			via, other = other, via
		}
		if slices.Contains(ids, other) {
			continue
		}
		in, err := getInsight(tx, other)
		if err != nil {
			return nil, err
		}
		if !in.Current() || !seat.Sees(in.Scope, in.Target) || !in.Label.Within([]string{seat.Worker}) {
			continue
		}
		ids = append(ids, other)
		r := domain.Rank(mode, []domain.Candidate{{Insight: in}}, s.Now(), 1)[0]
		out = append(out, Recalled{Ranked: r, Via: via, ViaKind: domain.InsightLinkKind(l.Kind)})
	}
	return out, nil
}

// insightSeat is the scopes a worker belongs to.
func insightSeat(tx *gorm.DB, worker string) (domain.InsightSeat, error) {
	var st domain.InsightSeat
	err := tx.Raw("SELECT w.id AS worker, w.position_id AS position, p.role_id AS role FROM workers w JOIN positions p ON p.id = w.position_id WHERE w.id = ?", worker).
		Row().Scan(&st.Worker, &st.Position, &st.Role)
	if errors.Is(err, sql.ErrNoRows) {
		return st, domain.NotFound("worker", worker)
	}
	if err != nil {
		return st, fmt.Errorf("seat of %s: %w", worker, err)
	}
	return st, nil
}

// InsightFilter narrows list_insights. History lists every version of the
// insight with that id instead, oldest first.
type InsightFilter struct {
	Scope             domain.InsightScope
	Target            string
	Type              domain.InsightType
	Tag               string
	History           string
	IncludeSuperseded bool
}

// ListInsights lists the insights reader may recall (the owner: all),
// newest first.
func (s *Store) ListInsights(ctx context.Context, reader string, f InsightFilter) ([]domain.Insight, error) {
	tx := s.read(ctx)
	if f.History != "" {
		return s.history(tx, reader, f.History)
	}
	q := tx.Model(&insightRow{})
	if !f.IncludeSuperseded {
		q = q.Where("superseded_by = '' AND NOT retired")
	}
	if f.Scope != "" {
		q = q.Where("scope = ?", string(f.Scope))
	}
	if f.Target != "" {
		q = q.Where("target = ?", f.Target)
	}
	if f.Type != "" {
		q = q.Where("type = ?", string(f.Type))
	}
	if f.Tag != "" {
		q = q.Where("' ' || tags || ' ' LIKE ?", "% "+f.Tag+" %")
	}
	if reader != domain.OwnerWorker && reader != "" {
		seat, err := insightSeat(tx, reader)
		if err != nil {
			return nil, err
		}
		q = q.Where("scope = 'org' OR (scope = 'role' AND target = ?) OR (scope = 'position' AND target = ?) OR (scope = 'worker' AND target = ?)",
			seat.Role, seat.Position, seat.Worker)
	}
	var rows []insightRow
	if err := q.Order("created_at DESC, doc DESC").Limit(500).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list insights: %w", err)
	}
	out := mapRows(rows, insightRow.toDomain)
	if reader != "" {
		out = slices.DeleteFunc(out, func(in domain.Insight) bool { return !in.Label.Within([]string{reader}) })
	}
	return out, nil
}

// history walks the versions of id both ways.
func (s *Store) history(tx *gorm.DB, reader, id string) ([]domain.Insight, error) {
	in, err := getInsight(tx, id)
	if err != nil {
		return nil, err
	}
	if err := newAuthz(tx).seesInsight(reader, in); err != nil {
		return nil, err
	}
	for in.Supersedes != "" {
		if in, err = getInsight(tx, in.Supersedes); err != nil {
			return nil, err
		}
	}
	out := []domain.Insight{in}
	for in.SupersededBy != "" {
		if in, err = getInsight(tx, in.SupersededBy); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// InsightScopeHolders are the active workers an insight of a role or a
// position scope reaches now: who holds the role or the position.
func (s *Store) InsightScopeHolders(ctx context.Context, scope domain.InsightScope, target string) ([]string, error) {
	q := s.read(ctx).Table("workers").Joins("JOIN positions ON positions.id = workers.position_id").Where("workers.dismissed_at IS NULL")
	switch scope {
	case domain.ScopeRole:
		q = q.Where("positions.role_id = ?", target)
	case domain.ScopePosition:
		q = q.Where("positions.id = ?", target)
	default:
		return nil, domain.Invalid("scope", "holders are of a role or a position; got %q", scope)
	}
	holders := []string{}
	if err := q.Order("workers.id").Pluck("workers.id", &holders).Error; err != nil {
		return nil, fmt.Errorf("holders of %s %s: %w", scope, target, err)
	}
	return holders, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// EndorseInsight is a person vouching for a quarantined insight: it is
// trusted from then on, recorded as endorsed by actor, and ranks and is
// injected like any other. Only a person may, one who may recall it.
func (s *Store) EndorseInsight(ctx context.Context, actor, id string) (domain.Insight, error) {
	var out domain.Insight
	err := s.write(ctx, func(tx *gorm.DB) error {
		in, err := getInsight(tx, id)
		if err != nil {
			return err
		}
		var w workerRow
		if err := tx.Select("kind").Where("id = ?", actor).Take(&w).Error; err != nil {
			return notFoundOr(err, "worker", actor)
		}
		if w.Kind != string(domain.WorkerHuman) {
			return domain.Forbidden("%s is an AI worker; only a person endorses an insight", actor)
		}
		if err := newAuthz(tx).seesInsight(actor, in); err != nil {
			return err
		}
		if !in.Current() {
			return fmt.Errorf("insight %s was superseded by %q (retired: %v); endorse the current version: %w", id, in.SupersededBy, in.Retired, domain.ErrConflict)
		}
		if !in.Quarantined() {
			return fmt.Errorf("insight %s is not quarantined (endorsed by %q): %w", id, in.EndorsedBy, domain.ErrConflict)
		}
		now := s.Now()
		in.Label, in.EndorsedBy, in.EndorsedAt = in.Label.Endorsed(), actor, &now
		out = in
		if err := tx.Model(&insightRow{}).Where("id = ?", id).Updates(map[string]any{"label": in.Label.Encode(), "endorsed_by": actor, "endorsed_at": &now}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "endorse_insight", Actor: actor, Target: id})
	})
	if err != nil {
		return domain.Insight{}, fmt.Errorf("endorse insight %s: %w", id, err)
	}
	return out, nil
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

// budgetStopRow records that a budget stopped an activation's model
// calls, so the run is recorded as failed for that reason whatever its
// agent's exit status.
type budgetStopRow struct {
	ActivationID string `gorm:"primaryKey"`
	Message      string `gorm:"not null"`
	CreatedAt    time.Time
}

func (budgetStopRow) TableName() string { return "budget_stops" }

// holds are the budgets whose hard limit was reached in their current
// window, by what they hold: the org, workers, streams.
type holds struct {
	org     *budgetRow
	workers map[string]budgetRow
	streams map[string]budgetRow
}

func (s *Store) budgetHolds(tx *gorm.DB) (holds, error) {
	var rows []budgetRow
	if err := tx.Where("hard_reached <> ''").Order("scope, target, period").Find(&rows).Error; err != nil {
		return holds{}, fmt.Errorf("budgets reached: %w", err)
	}
	h := holds{workers: map[string]budgetRow{}, streams: map[string]budgetRow{}}
	now := s.Now()
	for _, r := range rows {
		if r.HardReached != domain.BudgetWindow(r.Period).Key(now) {
			continue // reached in a window that has ended
		}
		switch domain.BudgetScope(r.Scope) {
		case domain.BudgetOrg:
			h.org = &r
		case domain.BudgetWorker:
			h.workers[r.Target] = r
		case domain.BudgetStream:
			h.streams[r.Target] = r
		}
	}
	return h, nil
}

// exclude narrows a query on triggers to those no budget holds: none when
// the org is held, else not of held workers nor of events on held streams.
func (h holds) exclude(tx, q *gorm.DB) *gorm.DB {
	if h.org != nil {
		return q.Where("1 = 0")
	}
	if len(h.workers) > 0 {
		q = q.Where("worker_id NOT IN ?", keys(h.workers))
	}
	if len(h.streams) > 0 {
		q = q.Where("event_seq NOT IN (?)", tx.Model(&eventRow{}).Select("seq").Where("stream_id IN ?", keys(h.streams)))
	}
	return q
}

// of is the budget holding a worker's trigger on stream, if any.
func (h holds) of(worker string, streams ...string) (budgetRow, bool) {
	if r, ok := h.workers[worker]; ok {
		return r, true
	}
	for _, st := range streams {
		if r, ok := h.streams[st]; ok {
			return r, true
		}
	}
	if h.org != nil {
		return *h.org, true
	}
	return budgetRow{}, false
}

func keys(m map[string]budgetRow) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (s *Store) recordStop(tx *gorm.DB, activation string, stop *domain.BudgetExceededError) error {
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&budgetStopRow{ActivationID: activation, Message: stop.Error(), CreatedAt: s.Now()}).Error
}

// BudgetStop is why a budget stopped an activation's model calls; empty
// when none did.
func (s *Store) BudgetStop(ctx context.Context, activationID string) (string, error) {
	var msgs []string
	if err := s.read(ctx).Model(&budgetStopRow{}).Where("activation_id = ?", activationID).Pluck("message", &msgs).Error; err != nil {
		return "", fmt.Errorf("budget stop of %s: %w", activationID, err)
	}
	if len(msgs) == 0 {
		return "", nil
	}
	return msgs[0], nil
}

// scopeRank orders the budgets a call is charged to, so the one a stop
// names is the narrowest: the worker's, then a stream's, then the org's.
var scopeRank = map[string]int{string(domain.BudgetWorker): 0, string(domain.BudgetStream): 1, string(domain.BudgetOrg): 2}

// chargeBudgets charges a call just recorded to each budget over it: a
// soft threshold crossed for the first time in its window sends notices,
// a hard limit reached holds the scope and sends notices, once per window
// each (a hard limit reached in the same call as the soft threshold sends
// only its own). It returns the first hard limit reached. Each budget
// keeps its window's spend as running sums, so a call costs the same
// however long the ledger grows; the sums start from the ledger when a
// window begins (and when the budget is set).
func (s *Store) chargeBudgets(tx *gorm.DB, act activationRow, streams []string, call modelCallRow) (*domain.BudgetExceededError, error) {
	q := tx.Where("scope = ?", string(domain.BudgetOrg)).Or("scope = ? AND target = ?", string(domain.BudgetWorker), act.WorkerID)
	if len(streams) > 0 {
		q = q.Or("scope = ? AND target IN ?", string(domain.BudgetStream), streams)
	}
	var rows []budgetRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("budgets of %s: %w", act.ID, err)
	}
	slices.SortStableFunc(rows, func(a, b budgetRow) int { return scopeRank[a.Scope] - scopeRank[b.Scope] })
	now := s.Now()
	var stop *domain.BudgetExceededError
	for _, r := range rows {
		b := r.toDomain()
		key := b.Window.Key(now)
		spend, err := r.charge(tx, key, b.Window.Start(now), call)
		if err != nil {
			return nil, err
		}
		set := r.sums()
		state := b.StateOf(spend)
		kind := ""
		switch {
		case state == domain.BudgetExceeded && r.HardReached != key:
			kind, set["soft_noticed"], set["hard_reached"] = "budget_hard", key, key
		case state == domain.BudgetSoft && r.SoftNoticed != key:
			kind, set["soft_noticed"] = "budget_soft", key
		}
		if err := whereBudget(tx.Model(&budgetRow{}), b.Scope, b.Target, b.Window).Updates(set).Error; err != nil {
			return nil, err
		}
		if kind == "" && state != domain.BudgetExceeded && r.HardReached != key {
			continue // the common case: nothing to say, nobody to name
		}
		st, err := s.budgetStatus(tx, r, now)
		if err != nil {
			return nil, err
		}
		if kind != "" {
			if err := s.noticeBudget(tx, st, kind, act.ID); err != nil {
				return nil, err
			}
		}
		if st.State == domain.BudgetExceeded && stop == nil {
			stop = &domain.BudgetExceededError{Status: st}
		}
	}
	if stop != nil && act.ID != "" {
		return stop, s.recordStop(tx, act.ID, stop)
	}
	return stop, nil
}

// charge adds call to the budget's running sums for window key, starting
// them from the ledger (which holds call already) when the window is new
// to them, and returns the spend.
func (r *budgetRow) charge(tx *gorm.DB, key string, start time.Time, call modelCallRow) (domain.Spend, error) {
	if r.SumWindow != key {
		sp, err := spendOf(tx, domain.BudgetScope(r.Scope), r.Target, start, nil)
		if err != nil {
			return domain.Spend{}, err
		}
		r.setSums(key, sp)
		return sp, nil
	}
	if call.Tool != "" {
		r.SumOutside++
	} else {
		r.SumCalls++
	}
	r.SumInput += call.InputTokens
	r.SumOutput += call.OutputTokens
	r.SumNanos += call.CostNanos
	if !call.Priced {
		r.SumUnpriced += call.InputTokens + call.OutputTokens
	}
	return r.spend(), nil
}

// noticeBudget puts a budget notice in the inbox of each of the budget's
// raisers, with a machine-readable extra.
func (s *Store) noticeBudget(tx *gorm.DB, st domain.BudgetStatus, kind, activation string) error {
	subject, body := "Budget exceeded: "+st.Name(), (&domain.BudgetExceededError{Status: st}).Error()
	if kind == "budget_soft" {
		subject = fmt.Sprintf("Budget warning: %s past its soft threshold", st.Name())
		body = softNotice(st)
	}
	extra, err := json.Marshal(map[string]any{"kind": kind, "scope": st.Scope, "target": st.Target, "window": st.Window,
		"windowStart": st.WindowStart, "windowEnd": st.WindowEnd, "limit": limitJSON(st.Hard), "soft": limitJSON(st.Soft),
		"spend":      map[string]any{"calls": st.Spend.Calls, "outsideCalls": st.Spend.OutsideCalls, "tokens": st.Spend.Tokens(), "usd": st.Spend.Money.Dollars(), "unpricedTokens": st.Spend.UnpricedTokens},
		"activation": activation, "raisers": st.Raisers})
	if err != nil {
		return err
	}
	for _, w := range st.Raisers {
		msg := domain.Message{Subject: subject, Body: body, BodyContentType: "text/plain", Extra: extra}
		if _, err := s.notifyTx(tx, w, msg, activation); err != nil {
			return fmt.Errorf("budget notice to %s: %w", w, err)
		}
	}
	return nil
}

func softNotice(st domain.BudgetStatus) string {
	until := ""
	if st.WindowEnd != nil {
		until = fmt.Sprintf(" until the window ends (%s) or", st.WindowEnd.Format(time.RFC3339))
	}
	target := ""
	if st.Target != "" {
		target = fmt.Sprintf(`,"target":%q`, st.Target)
	}
	return fmt.Sprintf("%s: %s spent %s by %s%s, past its soft threshold of %s. At the hard limit of %s the relay refuses further model calls and no new run starts for it%s until the limit is raised. %s can raise it with set_budget {\"scope\":%q%s,\"window\":%q, …}.",
		st.Name(), st.Spend.Summary(), st.Window.Adverb(), st.Subject(), st.Spend.UnpricedNote(), st.Soft, st.Hard, until, domain.OrList(st.Raisers), st.Scope, target, st.Window)
}

func limitJSON(l domain.Limit) map[string]any {
	out := map[string]any{}
	if l.Tokens > 0 {
		out["tokens"] = l.Tokens
	}
	if l.Money > 0 {
		out["usd"] = l.Money.Dollars()
	}
	if l.Calls > 0 {
		out["calls"] = l.Calls
	}
	return out
}

// WaitingWorkers names each worker with pending triggers a reached budget
// holds, with the budget, so a chart can show it waiting rather than idle.
func (s *Store) WaitingWorkers(ctx context.Context) (map[string]string, error) {
	tx := s.read(ctx)
	h, err := s.budgetHolds(tx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if h.org == nil && len(h.workers) == 0 && len(h.streams) == 0 {
		return out, nil
	}
	var rows []struct{ WorkerID, StreamID string }
	if err := tx.Table("triggers").Select("DISTINCT triggers.worker_id, events.stream_id").
		Joins("JOIN events ON events.seq = triggers.event_seq").
		Where("triggers.status = ?", triggerPending).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("waiting workers: %w", err)
	}
	for _, r := range rows {
		if b, ok := h.of(r.WorkerID, r.StreamID); ok && out[r.WorkerID] == "" {
			out[r.WorkerID] = fmt.Sprintf("waits for %s to be raised", b.toDomain().Name())
		}
	}
	return out, nil
}

// noteBudgetHolds gives each pending trigger a reached budget holds that
// budget as its reason, so an operator sees why it waits.
func (s *Store) noteBudgetHolds(ctx context.Context, trigs []domain.QueuedTrigger) error {
	h, err := s.budgetHolds(s.read(ctx))
	if err != nil {
		return err
	}
	for i, t := range trigs {
		if t.Status != domain.TriggerPending {
			continue
		}
		if r, ok := h.of(t.WorkerID, t.StreamID); ok {
			trigs[i].Reason = fmt.Sprintf("waits: %s is exceeded; it runs once the limit is raised (set_budget) or the window ends", r.toDomain().Name())
		}
	}
	return nil
}

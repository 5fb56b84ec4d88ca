package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Trigger states, as stored.
const (
	triggerPending = string(domain.TriggerPending)
	triggerClaimed = string(domain.TriggerClaimed)
	triggerDone    = string(domain.TriggerDone)
	triggerParked  = string(domain.TriggerParked)
	triggerDropped = string(domain.TriggerDropped)
)

type triggerRow struct {
	ID           int64  `gorm:"primaryKey;autoIncrement"`
	WorkerID     string `gorm:"not null;uniqueIndex:idx_trigger_worker_event,priority:1;index:idx_trigger_status_worker,priority:2"`
	EventSeq     int64  `gorm:"not null;uniqueIndex:idx_trigger_worker_event,priority:2"`
	Kind         string `gorm:"not null"`
	Status       string `gorm:"not null;index:idx_trigger_status_worker,priority:1"`
	ActivationID string `gorm:"index"`
	CreatedAt    time.Time
	// Attempts counts runs whose agent never started; NotBefore holds the
	// trigger back until its retry is due.
	Attempts  int `gorm:"not null;default:0"`
	NotBefore *time.Time
	LastError string
	// Reason says why a trigger is parked or was dropped.
	Reason string
	// Depth is its event's causal depth, or 0 once an operator released
	// it: a person chose to let the chain go on, so it counts afresh.
	Depth int `gorm:"not null;default:0"`
}

func (triggerRow) TableName() string { return "triggers" }

type activationRow struct {
	ID           string `gorm:"primaryKey"`
	WorkerID     string `gorm:"not null;index"`
	TriggerIDs   string `gorm:"not null"`
	Status       string `gorm:"not null;index"`
	StartedAt    time.Time
	FinishedAt   *time.Time
	ExitStatus   *int
	Error        string
	DurationNs   int64
	InputTokens  int64
	OutputTokens int64
	// PGID and StartTicks identify the agent's host process once it has
	// started, so a restart after a crash can stop it.
	PGID       int    `gorm:"column:pgid"`
	StartTicks uint64 `gorm:"column:start_ticks"`
	// Runtime names the runtime the agent started on: a restart adopts the
	// runs of one whose agents outlive the server (dispatch.Options.Adopts).
	Runtime string `gorm:"not null;default:''"`
	// LeaseUntil is when a running activation counts as dead unless the
	// server that runs it renews it first (leases.go); nil before then.
	LeaseUntil *time.Time `gorm:"index"`
	// Label is the run's domain.Label, encoded: its triggers' at claim,
	// raised by what it reads (labels.go).
	Label string `gorm:"not null;default:''"`
}

func (activationRow) TableName() string { return "activations" }

func (r activationRow) toDomain() domain.Activation {
	a := domain.Activation{ID: r.ID, WorkerID: r.WorkerID, Status: domain.ActivationStatus(r.Status), StartedAt: r.StartedAt.UTC(),
		ExitStatus: r.ExitStatus, Error: r.Error, Duration: time.Duration(r.DurationNs), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
	json.Unmarshal([]byte(r.TriggerIDs), &a.TriggerIDs)
	a.Label = storedLabel(r.Label)
	a.Tainted, a.TaintReason = a.Label.Untrusted, a.Label.Origin
	if r.FinishedAt != nil {
		t := r.FinishedAt.UTC()
		a.FinishedAt = &t
	}
	if r.PGID > 0 || r.Runtime != "" {
		a.Process = &domain.AgentProcess{PGID: r.PGID, StartTicks: r.StartTicks, Runtime: r.Runtime}
	}
	if r.LeaseUntil != nil && r.Status == string(domain.ActivationRunning) {
		t := r.LeaseUntil.UTC()
		a.LeaseUntil = &t
	}
	return a
}

// enqueueTriggers writes the event's triggers in the event's own
// transaction (a transactional outbox): one per subscribed, active AI
// worker other than the publisher. Activation logs never wake anyone.
func (s *Store) enqueueTriggers(tx *gorm.DB, ev domain.Event) error {
	if kind, _ := domain.StreamKindOf(ev.StreamID); kind == domain.StreamActivations {
		return nil
	}
	rows, err := s.queryFixed(tx, subscribedAISQL, ev.StreamID, string(domain.WorkerAI), ev.Source)
	if err != nil {
		return fmt.Errorf("find subscribers of %s: %w", ev.StreamID, err)
	}
	defer rows.Close()
	var workers []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return fmt.Errorf("find subscribers of %s: %w", ev.StreamID, err)
		}
		workers = append(workers, w)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("find subscribers of %s: %w", ev.StreamID, err)
	}
	for _, w := range workers {
		if err := s.insertTrigger(tx, w, ev, domain.TriggerEvent); err != nil {
			return err
		}
	}
	return nil
}

// subscribedAISQL selects a stream's hired AI subscribers but one (the
// event's source).
const subscribedAISQL = `SELECT workers.id FROM subscriptions JOIN workers ON workers.id = subscriptions.worker_id
	WHERE subscriptions.stream_id = ? AND workers.kind = ? AND workers.dismissed_at IS NULL AND workers.id <> ? ORDER BY workers.id`

// insertTriggerSQL stores a new trigger as GORM would create a triggerRow.
const insertTriggerSQL = `INSERT INTO triggers (worker_id, event_seq, kind, status, activation_id, created_at, attempts, not_before, last_error, reason, depth)
	VALUES (?, ?, ?, ?, '', ?, 0, NULL, '', '', ?)`

func (s *Store) insertTrigger(tx *gorm.DB, worker string, ev domain.Event, kind domain.TriggerKind) error {
	_, err := s.execFixed(tx, insertTriggerSQL, worker, ev.Seq, string(kind), triggerPending, s.Now(), ev.Depth)
	return err
}

// WorkersWithPending lists workers that have triggers waiting and due: a
// worker with a trigger backing off waits as a whole, so what arrives in
// the meantime is coalesced into its next try instead of failing alone.
// Triggers a reached budget holds are left out (budget_holds.go), and so
// are workers with a run in progress — on any server sharing the
// database — whose next run Claim would refuse anyway.
func (s *Store) WorkersWithPending(ctx context.Context) ([]string, error) {
	var ids []string
	held, err := s.budgetHolds(s.read(ctx))
	if err != nil {
		return nil, err
	}
	backingOff := s.read(ctx).Model(&triggerRow{}).Select("worker_id").Where("status = ? AND not_before > ?", triggerPending, s.Now())
	busy := s.read(ctx).Model(&activationRow{}).Select("worker_id").Where("status = ?", string(domain.ActivationRunning))
	q := s.read(ctx).Model(&triggerRow{}).Where("status = ? AND worker_id NOT IN (?) AND worker_id NOT IN (?)", triggerPending, backingOff, busy)
	if err := held.exclude(s.read(ctx), q).Distinct().Order("worker_id").Pluck("worker_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("workers with pending triggers: %w", err)
	}
	return ids, nil
}

// Claim starts an activation for a worker over all its pending triggers,
// oldest first, and mints its token (valid for tokenTTL, revoked when it
// finishes), in one transaction. It returns ErrNotFound when none wait,
// and when the worker already runs: one run per worker, whichever server
// of those sharing the database runs it. Triggers of a dismissed worker
// are closed instead of run; those a reached budget holds stay pending.
// The activation has no lease (ClaimLeased).
func (s *Store) Claim(ctx context.Context, worker, activationID string, tokenTTL time.Duration) (domain.Activation, []domain.Trigger, string, error) {
	return s.ClaimLeased(ctx, worker, activationID, tokenTTL, 0)
}

// ClaimLeased is Claim with the activation's lease taken in the same
// transaction (none when lease is 0): a server that dies right after
// claiming leaves a run that lapses, never one that blocks its worker.
//
// Claims from every server take turns behind the write lock (beginWrite),
// so checking for a running activation and inserting one cannot
// interleave: here that lock is the equal of FOR UPDATE SKIP LOCKED,
// without a second server waiting on rows the first has taken.
func (s *Store) ClaimLeased(ctx context.Context, worker, activationID string, tokenTTL, lease time.Duration) (domain.Activation, []domain.Trigger, string, error) {
	var act activationRow
	var trigs []domain.Trigger
	tok, hash, err := newToken(ActivationTokenPrefix)
	if err != nil {
		return domain.Activation{}, nil, "", err
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		var running []string
		if err := tx.Model(&activationRow{}).Where("worker_id = ? AND status = ?", worker, string(domain.ActivationRunning)).Limit(1).Pluck("id", &running).Error; err != nil {
			return err
		}
		if len(running) > 0 {
			return fmt.Errorf("%s already runs activation %s: %w", worker, running[0], domain.ErrNotFound)
		}
		held, err := s.budgetHolds(tx)
		if err != nil {
			return err
		}
		var rows []triggerRow
		if err := held.exclude(tx, tx.Where("worker_id = ? AND status = ?", worker, triggerPending)).Order("id").Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("no pending triggers for %s: %w", worker, domain.ErrNotFound)
		}
		for _, r := range rows {
			if r.NotBefore != nil && r.NotBefore.After(s.Now()) {
				return fmt.Errorf("triggers of %s back off until %s: %w", worker, r.NotBefore.UTC().Format(time.RFC3339), domain.ErrNotFound)
			}
		}
		var w workerRow
		if err := tx.Where("id = ?", worker).Take(&w).Error; err != nil {
			return err
		}
		status := triggerClaimed
		if w.DismissedAt != nil {
			status = triggerDone
		}
		if trigs, err = withEvents(tx, rows, activationID); err != nil {
			return err
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		if err := tx.Model(&triggerRow{}).Where("id IN ?", ids).Updates(map[string]any{"status": status, "activation_id": activationID}).Error; err != nil {
			return err
		}
		if w.DismissedAt != nil {
			trigs = nil
			return fmt.Errorf("worker %s is dismissed: %w", worker, domain.ErrNotFound)
		}
		idsJSON, _ := json.Marshal(ids)
		act = activationRow{ID: activationID, WorkerID: worker, TriggerIDs: string(idsJSON), Status: string(domain.ActivationRunning), StartedAt: s.Now()}
		if lease > 0 {
			until := s.Now().Add(lease)
			act.LeaseUntil = &until
		}
		label, err := triggersLabel(tx, trigs)
		if err != nil {
			return err
		}
		act.Label = label.Encode()
		if err := tx.Create(&act).Error; err != nil {
			return err
		}
		exp := s.Now().Add(tokenTTL)
		return tx.Create(&tokenRow{Hash: hash, WorkerID: worker, Kind: TokenActivation, ActivationID: activationID, CreatedAt: s.Now(), ExpiresAt: &exp}).Error
	})
	if err != nil {
		return domain.Activation{}, nil, "", fmt.Errorf("claim triggers of %s: %w", worker, err)
	}
	return act.toDomain(), trigs, tok, nil
}

// claimChunk bounds the events read in one query, under SQLite's limit on
// bound parameters.
const claimChunk = 500

// withEvents turns the claimed trigger rows into triggers of the
// activation, each with its event, read a chunk at a time: a run that
// coalesced a burst reads it in a few queries, not one per trigger, while
// it holds the write lock.
func withEvents(tx *gorm.DB, rows []triggerRow, activationID string) ([]domain.Trigger, error) {
	events := make(map[int64]domain.Event, len(rows))
	for start := 0; start < len(rows); start += claimChunk {
		chunk := rows[start:min(start+claimChunk, len(rows))]
		seqs := make([]int64, len(chunk))
		for i, r := range chunk {
			seqs[i] = r.EventSeq
		}
		var evs []eventRow
		if err := tx.Where("seq IN ?", seqs).Find(&evs).Error; err != nil {
			return nil, fmt.Errorf("events of the claimed triggers: %w", err)
		}
		for _, ev := range evs {
			dev, err := ev.toDomain()
			if err != nil {
				return nil, err
			}
			events[ev.Seq] = dev
		}
	}
	trigs := make([]domain.Trigger, 0, len(rows))
	for _, r := range rows {
		ev, ok := events[r.EventSeq]
		if !ok {
			return nil, fmt.Errorf("event %d of trigger %d: %w", r.EventSeq, r.ID, domain.ErrNotFound)
		}
		trigs = append(trigs, domain.Trigger{ID: r.ID, WorkerID: r.WorkerID, Kind: domain.TriggerKind(r.Kind), ActivationID: activationID, Attempts: r.Attempts, Event: ev})
	}
	return trigs, nil
}

// StartActivation records that an activation's agent is running — its
// host process, when it has one — and appends the start entry to its log,
// in one transaction.
func (s *Store) StartActivation(ctx context.Context, id string, p domain.AgentProcess, startLog domain.Event) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		if p.PGID > 0 || p.Runtime != "" {
			if err := tx.Model(&activationRow{}).Where("id = ?", id).Updates(map[string]any{"pgid": p.PGID, "start_ticks": p.StartTicks, "runtime": p.Runtime}).Error; err != nil {
				return err
			}
		}
		_, err := s.appendTx(tx, startLog, AppendOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("start activation %s: %w", id, err)
	}
	return nil
}

// FinishActivation records how an activation ended, revokes its token and
// appends the exit entry to its log, in one transaction. A succeeded or
// failed run closes its triggers; an interrupted one hands them back to
// pending so the next start runs them again (at-least-once). It is
// idempotent: an activation already ended (cancelled, reaped, finished)
// keeps its first outcome and nothing is written.
// The run's end, unless a stronger word on it came first, credits the
// insights it cited as utilized (finishRunTx).
func (s *Store) FinishActivation(ctx context.Context, a domain.Activation, exitLog domain.Event) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		if closed, err := s.closeActivation(tx, a, exitLog); err != nil || !closed {
			return err
		}
		if err := s.endedRunTx(tx, a); err != nil {
			return err
		}
		if err := s.unreadSteeringTx(tx, a); err != nil {
			return err
		}
		if err := s.finishRunTx(tx, a); err != nil {
			return err
		}
		next := triggerDone
		if a.Status == domain.ActivationInterrupted {
			next = triggerPending
		}
		return tx.Model(&triggerRow{}).Where("activation_id = ? AND status = ?", a.ID, triggerClaimed).
			Updates(map[string]any{"status": next}).Error
	})
	if err != nil {
		return fmt.Errorf("finish activation %s: %w", a.ID, err)
	}
	return nil
}

// closeActivation revokes a running activation's token, appends its log
// entries and records how it ended. It reports false, and does nothing,
// when the activation has already ended: the first outcome stands.
func (s *Store) closeActivation(tx *gorm.DB, a domain.Activation, logs ...domain.Event) (bool, error) {
	var row activationRow
	if err := tx.Where("id = ?", a.ID).Take(&row).Error; err != nil {
		return false, mapErr(err)
	}
	if row.Status != string(domain.ActivationRunning) {
		return false, nil
	}
	now := s.Now()
	if err := tx.Model(&tokenRow{}).Where("activation_id = ? AND revoked_at IS NULL", a.ID).Update("revoked_at", &now).Error; err != nil {
		return false, err
	}
	for _, ev := range logs {
		if _, err := s.appendTx(tx, ev, AppendOptions{}); err != nil {
			return false, err
		}
	}
	row.Status, row.FinishedAt, row.ExitStatus, row.Error = string(a.Status), &now, a.ExitStatus, a.Error
	row.DurationNs = int64(now.Sub(row.StartedAt))
	row.InputTokens, row.OutputTokens = a.InputTokens, a.OutputTokens
	return true, tx.Save(&row).Error
}

// RunningActivations lists the activations recorded as running.
func (s *Store) RunningActivations(ctx context.Context) ([]domain.Activation, error) {
	var rows []activationRow
	if err := s.read(ctx).Where("status = ?", string(domain.ActivationRunning)).Order("started_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("running activations: %w", err)
	}
	return mapRows(rows, activationRow.toDomain), nil
}

// OrphanedActivations lists, at start-up, the running activations a crash
// cut off, with the agents it may have left behind. On a database of its
// own that is every running one. On a shared one (Shared) it is only
// those whose lease lapsed or was never taken: the others are the live
// runs of other servers, and a crashed server's own lapse within a lease.
func (s *Store) OrphanedActivations(ctx context.Context) ([]domain.Activation, error) {
	var rows []activationRow
	if err := s.orphaned(s.read(ctx)).Order("started_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("orphaned activations: %w", err)
	}
	return mapRows(rows, activationRow.toDomain), nil
}

// orphaned narrows a query on activations to OrphanedActivations'.
func (s *Store) orphaned(q *gorm.DB) *gorm.DB {
	q = q.Where("status = ?", string(domain.ActivationRunning))
	if s.Shared() {
		q = q.Where("lease_until IS NULL OR lease_until < ?", s.Now())
	}
	return q
}

// RecoverActivations runs at start-up on the orphans the caller found
// (OrphanedActivations): those in interrupt, if still orphaned, are
// marked interrupted and their triggers become pending again; those in
// keep, whose agents go on outside the server, are left running for the
// dispatcher to adopt. It touches no other run: on a shared database more
// leases lapse between the caller's look and this write, and their agents
// may live (the next ReapLapsed asks).
func (s *Store) RecoverActivations(ctx context.Context, interrupt, keep []string) (int, error) {
	// Reads first: a start after a clean stop (nearly every one) finds
	// nothing to recover and takes no write lock.
	if none, err := s.nothingToRecover(ctx, interrupt, keep); err != nil || none {
		return 0, err
	}
	var n int
	err := s.write(ctx, func(tx *gorm.DB) error {
		var rows []activationRow
		if err := s.recoverable(tx, interrupt).Find(&rows).Error; err != nil {
			return err
		}
		n = len(rows)
		now := s.Now()
		ids := make([]string, 0, len(rows))
		for _, r := range rows {
			ids = append(ids, r.ID)
			if err := tx.Model(&activationRow{}).Where("id = ?", r.ID).Updates(map[string]any{
				"status": string(domain.ActivationInterrupted), "finished_at": &now, "error": "server stopped before the run finished"}).Error; err != nil {
				return err
			}
			// An agent orphaned by the crash must not act on with its token.
			if err := tx.Model(&tokenRow{}).Where("activation_id = ? AND revoked_at IS NULL", r.ID).Update("revoked_at", &now).Error; err != nil {
				return err
			}
		}
		return s.reclaimable(tx.Model(&triggerRow{}), ids, keep).Update("status", triggerPending).Error
	})
	if err != nil {
		return 0, fmt.Errorf("recover activations: %w", err)
	}
	return n, nil
}

// nothingToRecover says whether RecoverActivations would change nothing:
// no orphaned activation outside keep, and no trigger it would return to
// pending.
func (s *Store) nothingToRecover(ctx context.Context, interrupt, keep []string) (bool, error) {
	db := s.read(ctx)
	var orphans, claimed int64
	if err := s.recoverable(db.Model(&activationRow{}), interrupt).Count(&orphans).Error; err != nil {
		return false, fmt.Errorf("recover activations: %w", err)
	}
	if orphans > 0 {
		return false, nil
	}
	if err := s.reclaimable(db.Model(&triggerRow{}), nil, keep).Count(&claimed).Error; err != nil {
		return false, fmt.Errorf("recover activations: %w", err)
	}
	return claimed == 0, nil
}

// recoverable narrows a query on activations to the orphans recovery
// interrupts: those of interrupt still orphaned.
func (s *Store) recoverable(q *gorm.DB, interrupt []string) *gorm.DB {
	return s.orphaned(q).Where("id IN ?", append(slices.Clone(interrupt), ""))
}

// reclaimable narrows a query on triggers to the claimed ones recovery
// returns to pending: those of the interrupted runs (ids) and of none on
// a shared database, where other servers' claims are theirs; all but
// keep's on a database of its own.
func (s *Store) reclaimable(q *gorm.DB, ids, keep []string) *gorm.DB {
	q = q.Where("status = ?", triggerClaimed)
	if s.Shared() {
		return q.Where("activation_id IN ?", append(slices.Clone(ids), ""))
	}
	if len(keep) > 0 {
		q = q.Where("activation_id NOT IN ?", keep)
	}
	return q
}

// GetActivation returns one activation record.
func (s *Store) GetActivation(ctx context.Context, id string) (domain.Activation, error) {
	var r activationRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Activation{}, notFoundOr(err, "activation", id)
	}
	acts := []domain.Activation{r.toDomain()}
	if err := s.withRelayedTokens(ctx, acts); err != nil {
		return domain.Activation{}, err
	}
	return acts[0], nil
}

// ListActivations returns a worker's activations (all workers when empty), oldest first.
func (s *Store) ListActivations(ctx context.Context, worker string) ([]domain.Activation, error) {
	q := s.read(ctx).Order("started_at, id")
	if worker != "" {
		q = q.Where("worker_id = ?", worker)
	}
	var rows []activationRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list activations: %w", err)
	}
	acts := mapRows(rows, activationRow.toDomain)
	if err := s.withRelayedTokens(ctx, acts); err != nil {
		return nil, err
	}
	return acts, nil
}

// PendingTriggers counts triggers the dispatcher still has to deliver:
// pending or in a running activation. Parked ones wait for an operator.
func (s *Store) PendingTriggers(ctx context.Context) (int64, error) {
	var n int64
	err := s.read(ctx).Model(&triggerRow{}).Where("status IN ?", []string{triggerPending, triggerClaimed}).Count(&n).Error
	return n, err
}

// StartFailures says, per worker, why its agent cannot start: the last
// error of a trigger waiting to retry after a failed start, or the reason
// one was parked — so the org chart says so after the first failure, not
// once the retries are spent.
func (s *Store) StartFailures(ctx context.Context) (map[string]string, error) {
	var rows []triggerRow
	err := s.read(ctx).Select("worker_id", "status", "last_error", "reason").
		Where("(status = ? AND attempts > 0 AND last_error <> '') OR status = ?", triggerPending, triggerParked).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("workers whose agent cannot start: %w", err)
	}
	out := map[string]string{}
	for _, r := range rows {
		why := r.LastError
		if r.Status == triggerParked {
			why = "parked: " + r.Reason
		}
		if _, seen := out[r.WorkerID]; !seen && why != "" {
			out[r.WorkerID] = why
		}
	}
	return out, nil
}

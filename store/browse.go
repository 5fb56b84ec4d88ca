package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// This file holds the reads a person browsing the org needs and the tools
// do not offer: newest-first pages, the whole log after a cursor, and what
// runs right now. Callers decide who may see what; these only read.

// PageQuery selects events newest first.
type PageQuery struct {
	StreamIDs []string
	// Before is an exclusive cursor: only events with Seq < Before; 0
	// means from the newest.
	Before int64
	// Until, when set, is an exclusive cursor on the time instead, for
	// lists that merge events with other records by time.
	Until time.Time
	Limit int
	// To, when set, keeps only events whose message names this recipient.
	To string
	// Audit filters s-org events by the fields of their change; empty
	// fields match everything.
	Actor, Action, Target string
	// Undismissed, a worker's id, leaves out what it dismissed from its
	// inbox.
	Undismissed string
}

// EventsBefore returns a page of events newest first.
func (s *Store) EventsBefore(ctx context.Context, q PageQuery) ([]domain.Event, error) {
	if len(q.StreamIDs) == 0 {
		return nil, nil
	}
	if q.Limit <= 0 || q.Limit > MaxReadLimit {
		q.Limit = MaxReadLimit
	}
	db := s.read(ctx).Where("stream_id IN ?", q.StreamIDs)
	if q.Before > 0 {
		db = db.Where("seq < ?", q.Before)
	}
	if !q.Until.IsZero() {
		db = db.Where("created_at < ?", q.Until.UTC())
	}
	if q.To != "" {
		db = db.Where(s.dia.jsonHas("events.body", "to"), q.To)
	}
	if q.Undismissed != "" {
		db = db.Where("events.id"+undismissed, q.Undismissed)
	}
	for field, v := range map[string]string{"actor": q.Actor, "action": q.Action, "target": q.Target} {
		if v != "" {
			db = db.Where(s.dia.jsonText("events.body", "extra", field)+" = ?", v)
		}
	}
	var rows []eventRow
	if err := db.Order("seq DESC").Limit(q.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read events before %d: %w", q.Before, err)
	}
	return eventsOf(rows)
}

// EventsAfter returns events on every stream after the cursor, oldest
// first: what a live view fans out to its watchers.
func (s *Store) EventsAfter(ctx context.Context, since int64, limit int) ([]domain.Event, error) {
	if limit <= 0 || limit > MaxReadLimit {
		limit = MaxReadLimit
	}
	var rows []eventRow
	if err := s.read(ctx).Where("seq > ?", since).Order("seq ASC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read events after %d: %w", since, err)
	}
	return eventsOf(rows)
}

func eventsOf(rows []eventRow) ([]domain.Event, error) {
	out := make([]domain.Event, 0, len(rows))
	for _, r := range rows {
		ev, err := r.toDomain()
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// ActivationQuery selects activations newest first.
type ActivationQuery struct {
	// Workers limits the page to these workers; nil means every worker.
	Workers []string
	Status  domain.ActivationStatus
	// Before is an exclusive cursor on the start time; zero means now.
	Before time.Time
	Limit  int
	// Undismissed, a worker's id, leaves out what it dismissed from its
	// inbox.
	Undismissed string
}

// ActivationsBefore returns a page of activations, newest first.
func (s *Store) ActivationsBefore(ctx context.Context, q ActivationQuery) ([]domain.Activation, error) {
	if q.Workers != nil && len(q.Workers) == 0 {
		return nil, nil
	}
	if q.Limit <= 0 || q.Limit > MaxReadLimit {
		q.Limit = MaxReadLimit
	}
	db := s.read(ctx).Order("started_at DESC, id DESC").Limit(q.Limit)
	if q.Workers != nil {
		db = db.Where("worker_id IN ?", q.Workers)
	}
	if q.Status != "" {
		db = db.Where("status = ?", string(q.Status))
	}
	if !q.Before.IsZero() {
		db = db.Where("started_at < ?", q.Before.UTC())
	}
	if q.Undismissed != "" {
		db = db.Where("id"+undismissed, q.Undismissed)
	}
	var rows []activationRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list activations: %w", err)
	}
	acts := mapRows(rows, activationRow.toDomain)
	if err := s.withRelayedTokens(ctx, acts); err != nil {
		return nil, err
	}
	return acts, nil
}

// ActivationTriggers returns what woke an activation, oldest first: two
// queries, however many triggers.
func (s *Store) ActivationTriggers(ctx context.Context, activation string) ([]domain.Trigger, error) {
	var trigs []triggerRow
	if err := s.read(ctx).Where("activation_id = ?", activation).Order("id").Find(&trigs).Error; err != nil {
		return nil, fmt.Errorf("triggers of %s: %w", activation, err)
	}
	seqs := make([]int64, len(trigs))
	for i, r := range trigs {
		seqs[i] = r.EventSeq
	}
	var evRows []eventRow
	if err := s.read(ctx).Where("seq IN ?", seqs).Find(&evRows).Error; err != nil {
		return nil, fmt.Errorf("events of the triggers of %s: %w", activation, err)
	}
	events := map[int64]eventRow{}
	for _, r := range evRows {
		events[r.Seq] = r
	}
	out := make([]domain.Trigger, 0, len(trigs))
	for _, r := range trigs {
		ev, err := events[r.EventSeq].toDomain()
		if err != nil {
			return nil, fmt.Errorf("event %d of trigger %d: %w", r.EventSeq, r.ID, err)
		}
		out = append(out, domain.Trigger{ID: r.ID, WorkerID: r.WorkerID, Kind: domain.TriggerKind(r.Kind), ActivationID: activation, Event: ev})
	}
	return out, nil
}

// LatestLogEntry returns the newest entry of one of the given kinds that
// an activation wrote on its worker's log, and whether there is one.
func (s *Store) LatestLogEntry(ctx context.Context, worker, activation string, kinds ...domain.LogKind) (domain.Event, bool, error) {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	var rows []eventRow
	err := s.read(ctx).Where("caused_by = ? AND stream_id = ?", activation, domain.ActivationStreamPrefix+worker).
		Where(s.dia.jsonText("body", "subject")+" IN ?", names).Order("seq DESC").Limit(1).Find(&rows).Error
	if err != nil {
		return domain.Event{}, false, fmt.Errorf("latest %s of %s: %w", strings.Join(names, "/"), activation, err)
	}
	if len(rows) == 0 {
		return domain.Event{}, false, nil
	}
	ev, err := rows[0].toDomain()
	return ev, err == nil, err
}

// CountEvents counts the events on a stream, for a page's "n events" and
// for tests.
func (s *Store) CountEvents(ctx context.Context, stream string) (int64, error) {
	var n int64
	err := s.read(ctx).Model(&eventRow{}).Where("stream_id = ?", stream).Count(&n).Error
	return n, err
}

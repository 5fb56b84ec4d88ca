package store

import (
	"context"
	"fmt"
	"reflect"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// migration is one step of the schema's history. Steps run once, in order,
// each in its own transaction; append new steps, never edit old ones.
type migration struct {
	version int
	name    string
	up      func(tx *gorm.DB) error
}

var migrations = []migration{
	{1, "org graph", func(tx *gorm.DB) error {
		if err := autoMigrate(tx, &roleRow{}, &positionRow{}, &workerRow{}, &grantRow{},
			&streamRow{}, &subscriptionRow{}, &eventRow{}, &tokenRow{}, &settingRow{}); err != nil {
			return err
		}
		return tx.Create(&streamRow{ID: domain.StreamOrg, Name: "org", Description: "Audit trail of every change to the org graph.",
			TransportKind: string(domain.TransportLocal), TransportConfig: "{}"}).Error
	}},
	{2, "dispatch outbox", func(tx *gorm.DB) error {
		return autoMigrate(tx, &triggerRow{}, &activationRow{})
	}},
	{3, "outbound deliveries", func(tx *gorm.DB) error {
		return autoMigrate(tx, &deliveryRow{}, &deliveryAttemptRow{}, &deliveryCursorRow{}, &disabledEndpointRow{})
	}},
	{4, "skills", func(tx *gorm.DB) error {
		return autoMigrate(tx, &skillRow{})
	}},
	{5, "inbound attachments", func(tx *gorm.DB) error {
		return autoMigrate(tx, &attachmentRow{})
	}},
	{6, "relayed model calls", func(tx *gorm.DB) error {
		return autoMigrate(tx, &modelCallRow{})
	}},
	{7, "trigger retries and parking, agent processes", func(tx *gorm.DB) error {
		return autoMigrate(tx, &triggerRow{}, &activationRow{})
	}},
	{8, "web sessions", func(tx *gorm.DB) error {
		return autoMigrate(tx, &sessionRow{}, &signInCodeRow{})
	}},
	{9, "skill versions", func(tx *gorm.DB) error {
		return autoMigrate(tx, &skillVersionRow{})
	}},
	{10, "budgets", func(tx *gorm.DB) error {
		return autoMigrate(tx, &budgetRow{})
	}},
	{11, "model call cost", func(tx *gorm.DB) error {
		return autoMigrate(tx, &modelCallRow{})
	}},
	{12, "streams of activations", func(tx *gorm.DB) error {
		return autoMigrate(tx, &activationStreamRow{})
	}},
	{13, "runs stopped by a budget", func(tx *gorm.DB) error {
		return autoMigrate(tx, &budgetStopRow{})
	}},
	{14, "token labels and last use", func(tx *gorm.DB) error {
		return autoMigrate(tx, &tokenRow{})
	}},
	{15, "readiness probe row", func(tx *gorm.DB) error {
		return autoMigrate(tx, &probeRow{})
	}},
	{16, "causal depth of events and triggers, activation leases", func(tx *gorm.DB) error {
		return autoMigrate(tx, &eventRow{}, &triggerRow{}, &activationRow{})
	}},
	{17, "approval requests, grants that need approval, tainted runs", func(tx *gorm.DB) error {
		return autoMigrate(tx, &approvalRow{}, &grantRow{}, &activationRow{})
	}},
	{18, "spec tasks", func(tx *gorm.DB) error {
		return autoMigrate(tx, &specTaskRow{}, &taskItemRow{})
	}},
	{19, "insight memory", migrateInsights},
	{20, "tool results kept to be read", func(tx *gorm.DB) error {
		return autoMigrate(tx, &resultRow{})
	}},
	{21, "tasks (task-augmented tool calls)", func(tx *gorm.DB) error {
		return autoMigrate(tx, &taskRow{})
	}},
	{22, "contact channels of human workers", func(tx *gorm.DB) error {
		return autoMigrate(tx, &contactRow{})
	}},
	{23, "spec tasks cloned from a URL, their lessons, learn questions about items", func(tx *gorm.DB) error {
		return autoMigrate(tx, &specTaskRow{}, &itemLessonRow{}, &learnQuestionRow{})
	}},
	{24, "the remote's id of each delivered message", func(tx *gorm.DB) error {
		return autoMigrate(tx, &deliveryRow{})
	}},
	{25, "events by stream in order, on PostgreSQL", migrateStreamOrder},
	{26, "cache epochs, moved by triggers on what caches copy", migrateEpochs},
	{27, "labels on what agents read and write, private streams", migrateLabels},
	{28, "budget reservations: what model calls in flight hold", func(tx *gorm.DB) error {
		return autoMigrate(tx, &reservationRow{})
	}},
	{29, "a JSON reader that skips damaged bodies, on PostgreSQL", migrateJSONReader},
	{30, "outside MCP servers, their credentials and tool lists", migrateMCPServers},
	{31, "the audit of every tool call", func(tx *gorm.DB) error {
		return autoMigrate(tx, &callRow{})
	}},
	{32, "agent sessions a worker's runs continue", func(tx *gorm.DB) error {
		return autoMigrate(tx, &agentSessionRow{})
	}},
	{33, "workers' workspaces and the repositories attached to them", func(tx *gorm.DB) error {
		return autoMigrate(tx, &workspaceRow{})
	}},
	{34, "outside tool calls on the spend ledger, budgets that limit them", func(tx *gorm.DB) error {
		return autoMigrate(tx, &modelCallRow{}, &budgetRow{})
	}},
	{35, "messages that steer running activations", func(tx *gorm.DB) error {
		return autoMigrate(tx, &steerRow{})
	}},
	{36, "the built-in agent's kept conversations and their labels", func(tx *gorm.DB) error {
		return autoMigrate(tx, &agentSessionRow{})
	}},
	{37, "pull requests opened for spec-task items", func(tx *gorm.DB) error {
		return autoMigrate(tx, &specTaskRow{}, &taskItemRow{})
	}},
	{38, "processors between streams, and the work they have to do", func(tx *gorm.DB) error {
		return autoMigrate(tx, &processorRow{}, &processorWorkRow{})
	}},
	{39, "questions asked of people, open until answered", func(tx *gorm.DB) error {
		return autoMigrate(tx, &questionRow{})
	}},
	{42, "items dismissed from inboxes", func(tx *gorm.DB) error {
		return autoMigrate(tx, &inboxDismissalRow{})
	}},
	{50, "insight credit ledger, runs' outcomes, people's votes on insights", migrateCredit},
	{51, "the run each spec-task item was delivered in", func(tx *gorm.DB) error {
		return autoMigrate(tx, &itemRunRow{})
	}},
	{53, "people: org roles, invitations, sessions the identity provider opened", func(tx *gorm.DB) error {
		return autoMigrate(tx, &orgRoleRow{}, &invitationRow{}, &sessionRow{})
	}},
	{54, "spec-task items' delta, framework, idioms and budget; explorers; clarifying questions", func(tx *gorm.DB) error {
		return autoMigrate(tx, &taskItemRow{}, &specTaskRow{})
	}},
	{55, "spec-task explorations: each explorer's partition and its coverage", func(tx *gorm.DB) error {
		return autoMigrate(tx, &exploreRow{})
	}},
	{56, "recurring spec tasks", func(tx *gorm.DB) error {
		return autoMigrate(tx, &recurrenceRow{})
	}},
	{57, "MCP clients that log in: registered clients, authorization codes, refresh tokens", func(tx *gorm.DB) error {
		return autoMigrate(tx, &oauthClientRow{}, &oauthCodeRow{}, &oauthRefreshRow{})
	}},
	{61, "the helix runtime: each worker's Helix project, app, repository and session", func(tx *gorm.DB) error {
		return autoMigrate(tx, &helixWorkspaceRow{})
	}},
	{63, "the runtime each activation's agent started on", func(tx *gorm.DB) error {
		if tx.Migrator().HasColumn(&activationRow{}, "Runtime") {
			return nil
		}
		return tx.Migrator().AddColumn(&activationRow{}, "Runtime")
	}},
	{65, "insight embeddings for hybrid recall", migrateEmbeddings},
	{68, "a cache epoch moved by org roles and subscriptions", migrateAccessEpoch},
	{69, "task leases: which working tasks a live server still runs", func(tx *gorm.DB) error {
		if tx.Migrator().HasColumn(&taskRow{}, "LeaseUntil") {
			return nil
		}
		return tx.Migrator().AddColumn(&taskRow{}, "LeaseUntil")
	}},
	{70, "insight credit checkpoints: a fold reads only the ledger since", func(tx *gorm.DB) error {
		return autoMigrate(tx, &creditCheckpointRow{})
	}},
	{71, "events by stream: the dialect's one index (27 had brought back the one 25 dropped on PostgreSQL)", migrateStreamIndex},
	{72, "deliveries an operator sent again count their attempts from then", func(tx *gorm.DB) error {
		if tx.Migrator().HasColumn(&deliveryRow{}, "RetriedAfter") {
			return nil
		}
		return tx.Migrator().AddColumn(&deliveryRow{}, "RetriedAfter")
	}},
	{73, "archived streams: kept and readable, taking nothing new", func(tx *gorm.DB) error {
		if tx.Migrator().HasColumn(&streamRow{}, "ArchivedAt") {
			return nil
		}
		return tx.Migrator().AddColumn(&streamRow{}, "ArchivedAt")
	}},
}

type schemaMigration struct {
	Version int `gorm:"primaryKey;autoIncrement:false"`
	Name    string
}

func (schemaMigration) TableName() string { return "schema_migrations" }

func (s *Store) migrate(ctx context.Context) error {
	if s.upToDate(ctx) {
		return nil
	}
	if err := s.db.WithContext(ctx).AutoMigrate(&schemaMigration{}); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, ok := ctx.Value(migratedKey{}).(migratedSet); !ok {
		ctx = context.WithValue(ctx, migratedKey{}, migratedSet{})
	}
	for _, m := range migrations {
		err := s.write(ctx, func(tx *gorm.DB) error {
			var n int64
			if err := tx.Model(&schemaMigration{}).Where("version = ?", m.version).Count(&n).Error; err != nil || n > 0 {
				return err
			}
			if err := m.up(tx); err != nil {
				return err
			}
			return tx.Create(&schemaMigration{Version: m.version, Name: m.name}).Error
		})
		if err != nil {
			return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.name, err)
		}
	}
	if err := s.dia.afterMigrate(s.db.WithContext(ctx)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// migratedSet holds the row types autoMigrate has brought to their
// current struct in this run of migrate, by type.
type migratedSet map[reflect.Type]any

type migratedKey struct{}

// autoMigrate is AutoMigrate for a migration step, once per row type in a
// run: the first step to name a type brings its table to the current
// struct, so a later step's AutoMigrate of the same type has nothing to
// add. A fresh database would otherwise migrate its busiest tables up to
// seven times, and on SQLite each time parses every column's DDL: most
// of a first start. It relies on no step undoing what a struct declares
// (TestSchemaIsAutoMigrateFixedPoint).
func autoMigrate(tx *gorm.DB, models ...any) error {
	done, _ := tx.Statement.Context.Value(migratedKey{}).(migratedSet)
	todo := make([]any, 0, len(models))
	for _, m := range models {
		if _, ok := done[reflect.TypeOf(m)]; !ok {
			todo = append(todo, m)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := tx.AutoMigrate(todo...); err != nil {
		return err
	}
	for _, m := range todo {
		if done != nil {
			done[reflect.TypeOf(m)] = m
		}
	}
	return nil
}

// migrateStreamIndex makes the index events are read by stream with, the
// dialect's own: (stream_id) on SQLite, whose index ends with the rowid
// (seq) anyway, and (stream_id, seq) on PostgreSQL (migrateStreamOrder).
// It is not declared on eventRow: AutoMigrate would make the SQLite one
// on PostgreSQL too, as migration 27 did after 25 had dropped it, and
// every event written there kept an index nothing read.
func migrateStreamIndex(tx *gorm.DB) error {
	if dialectOf(tx).name() == "postgres" {
		return migrateStreamOrder(tx)
	}
	return tx.Exec("CREATE INDEX IF NOT EXISTS idx_events_stream_id ON events (stream_id)").Error
}

// migrateStreamOrder lets PostgreSQL read a page of one stream from its
// index alone, however many events other streams hold. SQLite's index on
// stream_id already ends with seq (the rowid), so it needs nothing.
func migrateStreamOrder(tx *gorm.DB) error {
	if dialectOf(tx).name() != "postgres" {
		return nil
	}
	if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_events_stream_seq ON events (stream_id, seq)").Error; err != nil {
		return err
	}
	return tx.Exec("DROP INDEX IF EXISTS idx_events_stream_id").Error
}

// migrateJSONReader adds helix_jsonb, which reads text as jsonb and a
// body that is not JSON (damaged in the database) as NULL, so the filters
// that look inside bodies (dialect_postgres.go jsonText, jsonHas) skip it
// instead of failing the whole page. PostgreSQL 15 has no
// pg_input_is_valid; the exception block costs about what the cast does.
// It is not parallel safe: an exception block starts a subtransaction.
func migrateJSONReader(tx *gorm.DB) error {
	if dialectOf(tx).name() != "postgres" {
		return nil
	}
	return tx.Exec(`CREATE OR REPLACE FUNCTION helix_jsonb(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS $$
BEGIN
	RETURN t::jsonb;
EXCEPTION WHEN others THEN
	RETURN NULL;
END $$`).Error
}

// upToDate reports whether every migration is recorded as applied, read
// in one query: then opening the store changes nothing, and a restart or
// a test's copy of a migrated database skips the per-migration
// transactions (tens of milliseconds on PostgreSQL). Any doubt — no
// table yet, an error — means false, and migrate checks one by one.
func (s *Store) upToDate(ctx context.Context) bool {
	var applied []int
	if err := s.db.WithContext(ctx).Model(&schemaMigration{}).Pluck("version", &applied).Error; err != nil {
		return false
	}
	have := make(map[int]bool, len(applied))
	for _, v := range applied {
		have[v] = true
	}
	for _, m := range migrations {
		if !have[m.version] {
			return false
		}
	}
	return true
}

// migrateLabels adds the label columns (labels.go) and private streams,
// and carries the taint of runs recorded before labels into their label.
func migrateLabels(tx *gorm.DB) error {
	if err := autoMigrate(tx, &eventRow{}, &activationRow{}, &streamRow{}, &attachmentRow{}, &skillRow{}, &skillVersionRow{},
		&specTaskRow{}, &approvalRow{}, &insightRow{}); err != nil {
		return err
	}
	if !tx.Migrator().HasColumn("activations", "taint_reason") {
		return nil
	}
	var tainted []struct{ ID, TaintReason string }
	if err := tx.Table("activations").Select("id, taint_reason").Where("tainted").Scan(&tainted).Error; err != nil {
		return err
	}
	for _, a := range tainted {
		label := domain.Untrusted(a.TaintReason).Encode()
		if err := tx.Table("activations").Where("id = ?", a.ID).Update("label", label).Error; err != nil {
			return err
		}
	}
	return nil
}

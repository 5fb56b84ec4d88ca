package store

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sync/atomic"

	"gorm.io/gorm"
)

// epochRow counts the changes to what one in-process cache copies. The
// database's own triggers move it, in the transaction of the change, so a
// change made by any process on the database — another server, the CLI —
// moves it when it commits, and one indexed read tells a cache whether it
// may answer. Writes that do not change what is copied (a token's or a
// skill's last use) leave it.
type epochRow struct {
	Name string `gorm:"primaryKey"`
	N    int64  `gorm:"not null;default:0"`
}

func (epochRow) TableName() string { return "cache_epochs" }

// The caches an epoch guards.
const (
	// epochAuth moves with tokens, workers, grants and skills: what
	// authenticating a request reads (auth_cache.go).
	epochAuth = "auth"
	// epochSettings moves with settings (epoch_cache.go).
	epochSettings = "settings"
	// epochStreams moves with streams (stream_cache.go).
	epochStreams = "streams"
	// epochAccess moves with org roles, subscriptions and workers: who
	// may call what and who follows which stream, asked on every call
	// (access_cache.go). Migration 68 made it and its triggers.
	epochAccess = "access"
)

// epochTables are the tables each epoch follows, with the columns whose
// updates move it (none: any update). Migration 26 made their triggers:
// what is added here needs a migration of its own that makes its triggers.
var epochTables = map[string][]epochTable{
	epochAuth: {
		{table: "tokens", columns: []string{"worker_id", "kind", "activation_id", "expires_at", "revoked_at"}, noInsert: true},
		{table: "workers", noInsert: true},
		{table: "grants"},
		{table: "skills", columns: []string{"description", "input_schema", "template", "version", "image", "container", "status", "error"}},
	},
	epochSettings: {{table: "settings"}},
	epochStreams:  {{table: "streams"}},
}

// epochTable is one table an epoch follows. An insert of a token or a
// worker cannot change what a cache copied: nothing was cached for it.
type epochTable struct {
	table    string
	columns  []string
	noInsert bool
}

func migrateEpochs(tx *gorm.DB) error {
	if err := autoMigrate(tx, &epochRow{}); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(epochTables)) {
		tables := epochTables[name]
		if err := tx.Create(&epochRow{Name: name}).Error; err != nil {
			return err
		}
		for _, t := range tables {
			if err := dialectOf(tx).createEpochTrigger(tx, name, t); err != nil {
				return fmt.Errorf("epoch %s on %s: %w", name, t.table, err)
			}
		}
	}
	return nil
}

// epochSQL reads one epoch; the names are constants, so each query's text
// is fixed and prepared once.
var epochSQL = map[string]string{
	epochAuth:     "SELECT n FROM cache_epochs WHERE name = '" + epochAuth + "'",
	epochSettings: "SELECT n FROM cache_epochs WHERE name = '" + epochSettings + "'",
	epochStreams:  "SELECT n FROM cache_epochs WHERE name = '" + epochStreams + "'",
	epochAccess:   "SELECT n FROM cache_epochs WHERE name = '" + epochAccess + "'",
}

// accessTables are the tables epochAccess follows. They are not in
// epochTables, whose triggers migration 26 made before these tables were.
// A worker's kind is part of its org role.
var accessTables = []epochTable{{table: "org_roles"}, {table: "subscriptions"}, {table: "workers", noInsert: true}}

// migrateAccessEpoch makes epochAccess and its triggers.
func migrateAccessEpoch(tx *gorm.DB) error {
	if err := tx.Create(&epochRow{Name: epochAccess}).Error; err != nil {
		return err
	}
	for _, t := range accessTables {
		if err := dialectOf(tx).createEpochTrigger(tx, epochAccess, t); err != nil {
			return fmt.Errorf("epoch %s on %s: %w", epochAccess, t.table, err)
		}
	}
	return nil
}

// epoch reads the named epoch: one prepared point lookup on the pool,
// without a GORM session, since every authenticated request and every
// cached read pays for it; or takes it from ctx's Epochs (WithEpochs).
func (s *Store) epoch(ctx context.Context, name string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if e, ok := epochsOf(ctx); ok {
		switch name {
		case epochAuth:
			return e.auth, nil
		case epochSettings:
			return e.settings, nil
		case epochStreams:
			return e.streams, nil
		case epochAccess:
			return e.access, nil
		}
	}
	// Uncancellable: see queryFixed.
	ctx = context.WithoutCancel(ctx)
	st, err := s.prepared(ctx, epochSQL[name])
	if err != nil {
		return 0, fmt.Errorf("read epoch %s: %w", name, unavailable(err))
	}
	var n int64
	if err := st.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("read epoch %s: %w", name, unavailable(err))
	}
	return n, nil
}

// Epochs are every cache's epoch as one statement read them
// (Authenticate's). A request that changes nothing the caches copy — a
// read-only tool's call — may have its cached reads check against them
// (WithEpochs) instead of reading its cache's epoch each: it then reads
// what was current when it was authenticated, as if it had run then. A
// request that writes must not: its own change to a stream, say, moves
// the epoch only in the database, and it would read the stream as it was.
type Epochs struct {
	auth, settings, streams, access int64
	read                            bool
}

type epochsKey struct{}

// WithEpochs has the store's cached reads under ctx take their epochs
// from e; see Epochs for when that is right.
func WithEpochs(ctx context.Context, e Epochs) context.Context {
	return context.WithValue(ctx, epochsKey{}, e)
}

// requestEpochs are the epochs authenticating a write request read
// (WithAuthenticated), good for its cached reads until it first writes.
type requestEpochs struct {
	e     Epochs
	wrote atomic.Bool
}

type requestEpochsKey struct{}

// WithAuthenticated has the store's cached reads under ctx take e, the
// epochs authenticating its request read, until the request first
// writes (Store.write): what a call checks and reads before it writes —
// its org role, the approval gate's settings, the stream it publishes
// to — it reads as at authentication, as its grants were, and a publish
// pays for one read of the epochs, not three. From its first write on
// it reads them anew: its own change moves them only in the database.
// A change another process made before the request was authenticated is
// seen either way.
func WithAuthenticated(ctx context.Context, e Epochs) context.Context {
	return context.WithValue(ctx, requestEpochsKey{}, &requestEpochs{e: e})
}

// markWrote marks ctx's request as one that has written: its cached
// reads from now on read the epochs anew.
func markWrote(ctx context.Context) {
	if r, ok := ctx.Value(requestEpochsKey{}).(*requestEpochs); ok {
		r.wrote.Store(true)
	}
}

// epochsOf are the epochs ctx's cached reads take, if any: WithEpochs',
// or WithAuthenticated's until the request writes.
func epochsOf(ctx context.Context) (Epochs, bool) {
	if e, ok := ctx.Value(epochsKey{}).(Epochs); ok && e.read {
		return e, true
	}
	if r, ok := ctx.Value(requestEpochsKey{}).(*requestEpochs); ok && !r.wrote.Load() && r.e.read {
		return r.e, true
	}
	return Epochs{}, false
}

// allEpochsSQL reads every epoch at once, in one snapshot.
const allEpochsSQL = "SELECT name, n FROM cache_epochs"

// readEpochs reads every epoch, one prepared statement.
func (s *Store) readEpochs(ctx context.Context) (Epochs, error) {
	if err := ctx.Err(); err != nil {
		return Epochs{}, err
	}
	ctx = context.WithoutCancel(ctx) // uncancellable: see queryFixed
	st, err := s.prepared(ctx, allEpochsSQL)
	if err != nil {
		return Epochs{}, fmt.Errorf("read epochs: %w", unavailable(err))
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return Epochs{}, fmt.Errorf("read epochs: %w", unavailable(err))
	}
	defer rows.Close()
	e := Epochs{read: true}
	var seen int
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return Epochs{}, fmt.Errorf("read epochs: %w", unavailable(err))
		}
		switch name {
		case epochAuth:
			e.auth, seen = n, seen|1
		case epochSettings:
			e.settings, seen = n, seen|2
		case epochStreams:
			e.streams, seen = n, seen|4
		case epochAccess:
			e.access, seen = n, seen|8
		}
	}
	if err := rows.Err(); err != nil {
		return Epochs{}, fmt.Errorf("read epochs: %w", unavailable(err))
	}
	if seen != 15 {
		return Epochs{}, fmt.Errorf("read epochs: %d of %d found", bits.OnesCount(uint(seen)), len(epochSQL))
	}
	return e, nil
}

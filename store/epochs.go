package store

import (
	"context"
	"fmt"
	"maps"
	"slices"

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
	if err := tx.AutoMigrate(&epochRow{}); err != nil {
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
}

// epoch reads the named epoch: one prepared point lookup on the pool,
// without a GORM session, since every authenticated request and every
// cached read pays for it.
func (s *Store) epoch(ctx context.Context, name string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
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

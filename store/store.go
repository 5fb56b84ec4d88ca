// Package store persists the org graph through GORM in one SQLite file or
// a PostgreSQL database (dialect.go).
// It owns transactions, the audit trail and the event log; it knows nothing
// of HTTP, MCP or agents. Row structs stay unexported: callers see domain types.
package store

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"

	"github.com/helixml/helix-org/domain"
)

// Options tune how the database is opened.
type Options struct {
	// Synchronous is SQLite's synchronous pragma. FULL (the default) makes an
	// acknowledged write survive power loss; NORMAL is faster.
	Synchronous string
	// KeyFile holds the key that encrypts secret settings at rest. Empty
	// means "<db path>.key".
	KeyFile string
	Logger  *slog.Logger
	// Now overrides the clock, for tests.
	Now func() time.Time
	// Transports are the transport kinds streams may have, as the binary's
	// transport packages declare them: the store validates a stream's
	// config with them, and encrypts and redacts the secrets they name.
	// Nil knows only local streams.
	Transports *domain.Transports
	// NoGroupCommit commits each write in its own transaction, one fsync
	// apiece, instead of batching writes that arrive together
	// (groupcommit.go). It is for side-by-side benchmarks.
	NoGroupCommit bool
	// NoListen leaves out hearing other servers' commits on PostgreSQL
	// (notify_postgres.go), for a store that is its database's only user.
	// Tests on synctest's fake clock need it: the listener's socket read
	// never lets their bubble settle.
	NoListen bool
	// Embedder makes the vectors hybrid recall compares (domain.Embedder);
	// nil is the local one, domain.LocalEmbedder.
	Embedder domain.Embedder
	// InsightIDs is where new insights' ids draw their randomness; nil is
	// crypto/rand. Ranking breaks ties by id, so a simulation seeds it to
	// play the same world each run (make bench-memory). Nothing secret
	// reads it: tokens, sessions and keys use crypto/rand always.
	InsightIDs io.Reader
}

// Store is the one concrete handle on the database.
type Store struct {
	db *gorm.DB
	// reads is db with the read statements prepared once (pool.go).
	reads   *gorm.DB
	dia     dialect
	path    string
	keyFile string
	log     *slog.Logger
	now     func() time.Time
	// transports is Options.Transports.
	transports *domain.Transports
	// embedder is Options.Embedder.
	embedder domain.Embedder
	// provider is SetProviderEmbedder's.
	provider atomic.Pointer[ProviderEmbedder]
	// insightIDs is Options.InsightIDs, read under idMu (a seeded reader
	// is not safe for concurrent use).
	idMu       sync.Mutex
	insightIDs io.Reader

	// writeLock (a channel, so a waiting writer can also watch for its
	// answer) serialises this process's write transactions so they queue
	// in Go rather than spin on SQLite's busy handler; busy_timeout still
	// covers other processes (the CLI) writing the same file.
	writeLock   chan struct{}
	queue       writeQueue
	groupCommit bool
	// writes and commits count what write ran and committed (CommitStats).
	writes, commits atomic.Int64
	bc              broadcaster
	// stmts are the prepared statements of queries whose text never
	// changes, by that text (prepared.go).
	stmts  sync.Map
	nstmts atomic.Int64
	// texts are fixed queries in PostgreSQL's placeholders (fixedText).
	texts sync.Map
	// prepareWrites is set once migrations have run: from then on write
	// transactions on SQLite reuse prepared statements too (begin).
	prepareWrites atomic.Bool
	// settings caches settings as stored (epoch_cache.go).
	settings epochCache[cachedSetting]
	// auth caches what authenticating a token reads (auth_cache.go).
	auth authCache
	// streams caches streams as read (stream_cache.go).
	streams epochCache[cachedStream]
	// pages keeps event pages as read on SQLite (event_pages.go).
	pages eventPages
	// access caches org roles and subscriptions (access_cache.go).
	access accessCaches
	// cipher seals secrets with the key file, once it has been read.
	cipherMu sync.Mutex
	cipher   cipher.AEAD
	// replyMAC keys reply tokens (reply_tokens.go), once derived.
	replyMAC []byte
	// stopListening ends the wake-ups from other servers' commits
	// (notify_postgres.go); nil on SQLite.
	stopListening func()
	// calls is the writer of the audit of tool calls (calls.go).
	calls callLog
	// touches writes when tokens were last used (token_touch.go).
	touches tokenTouches
	// setWatch wakes waiters on a change of settings (settings_watch.go).
	setWatch settingsWatch
}

// Open opens (creating if needed) the database and migrates it. db is a
// SQLite file's path or a postgres:// URL (IsPostgres).
func Open(ctx context.Context, db string, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Embedder == nil {
		opts.Embedder = domain.LocalEmbedder
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var (
		dia       dialect = sqliteDialect{}
		path              = db
		dialector gorm.Dialector
	)
	if IsPostgres(db) {
		if opts.KeyFile == "" {
			return nil, fmt.Errorf("open database: a PostgreSQL store needs a key file (--key-file)")
		}
		dia, path, dialector = postgresDialect{url: db, node: newNode()}, redactURL(db), openPostgres(db)
		// PostgreSQL keeps microseconds: times the store stamps round to
		// them, so what a write returns is what a read finds.
		now := opts.Now
		opts.Now = func() time.Time { return now().Truncate(time.Microsecond) }
	} else {
		if opts.KeyFile == "" {
			opts.KeyFile = path + ".key"
		}
		var err error
		if dialector, err = openSQLite(path, opts.Synchronous); err != nil {
			return nil, err
		}
	}
	gdb, err := gorm.Open(dialector, &gorm.Config{
		Logger:                 logger.Default.LogMode(logger.Silent),
		SkipDefaultTransaction: true,
		TranslateError:         true,
		NamingStrategy:         tableNamer{schema.NamingStrategy{IdentifierMaxLength: 64}},
		NowFunc:                func() time.Time { return opts.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	go warmSchemas(gdb)
	if err := watchUnavailable(gdb); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if IsPostgres(db) {
		if err := keepConnections(gdb); err != nil {
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
	}
	s := &Store{db: gdb, dia: dia, path: path, keyFile: opts.KeyFile, log: opts.Logger.With("component", "store"), now: opts.Now, transports: opts.Transports, embedder: opts.Embedder,
		writeLock: make(chan struct{}, 1), groupCommit: !opts.NoGroupCommit, insightIDs: opts.InsightIDs}
	s.bc.init()
	s.touches.done.L = &s.touches.mu
	if s.reads, err = s.tunePool(); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s.prepareWrites.Store(s.dia.name() == "sqlite")
	if err := s.sealStreamSecrets(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if pg, ok := dia.(postgresDialect); ok && !opts.NoListen {
		s.listen(pg.url, pg.node)
	}
	return s, nil
}

// redactURL is a database URL without its password, to name it in errors
// and logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// dsn puts every pragma in the connection string so each pooled connection
// gets them, busy_timeout first so the others never fail with SQLITE_BUSY.
// _txlock=immediate makes every transaction take the write lock up front,
// which is what stops "database is locked" on read→write upgrades.
func dsn(path, sync string) string {
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", sync)
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	q.Set("_cache_size", strconv.Itoa(-cacheSizeKiB))
	return "file:" + path + "?" + q.Encode()
}

// createPrivate makes sure the database file exists with mode 0600 before
// SQLite creates it with the umask's mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err) // err names the path
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("chmod database file: %w", err)
	}
	return nil
}

// Transports are the transport kinds this store's streams may have.
func (s *Store) Transports() *domain.Transports { return s.transports }

// Close releases the database.
func (s *Store) Close() error {
	s.closeCallLog()
	s.closeTouches()
	s.closeSettingsWatch()
	if s.stopListening != nil {
		s.stopListening()
	}
	s.closeStatements()
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Path is the database file's path, or the PostgreSQL URL without its
// password.
func (s *Store) Path() string { return s.path }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now().UTC() }

// write runs fn in an immediate transaction, shared with the writes that
// arrive with it (groupcommit.go), and wakes event waiters after it
// commits. Nothing is acknowledged to a caller before the commit returns.
func (s *Store) write(ctx context.Context, fn func(tx *gorm.DB) error) error {
	markWrote(ctx)
	if s.groupCommit {
		return s.writeGrouped(ctx, fn)
	}
	s.writeLock <- struct{}{}
	defer func() { <-s.writeLock }()
	tx := s.begin(ctx)
	if tx.Error != nil {
		return mapErr(tx.Error)
	}
	committed := false
	defer func() {
		// A panicking write must not leave SQLite's write lock held.
		if !committed {
			tx.Rollback()
		}
	}()
	err := s.dia.beginWrite(tx)
	if err == nil {
		err = fn(tx)
	}
	if err != nil {
		return mapErr(err)
	}
	committed = true
	if err := tx.Commit().Error; err != nil {
		return mapErr(err)
	}
	s.writes.Add(1)
	s.commits.Add(1)
	s.bc.notify()
	return nil
}

// CommitStats counts the writes committed and the transactions that
// committed them: their ratio is how many writes share an fsync.
func (s *Store) CommitStats() (writes, commits int64) {
	return s.writes.Load(), s.commits.Load()
}

// read returns a context-bound handle for queries.
func (s *Store) read(ctx context.Context) *gorm.DB { return s.reads.WithContext(ctx) }

// mapErr turns GORM's translated errors into domain sentinels, and a
// database that cannot take the write into domain.ErrUnavailable.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return fmt.Errorf("%w: %v", domain.ErrConflict, err)
	case errors.Is(err, gorm.ErrForeignKeyViolated):
		return fmt.Errorf("%w: a referenced record does not exist: %v", domain.ErrNotFound, err)
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%w: %v", domain.ErrNotFound, err)
	}
	return unavailable(err)
}

// exists reports whether a row with the given primary key exists.
func exists(tx *gorm.DB, model any, id string) (bool, error) {
	var n int64
	if err := tx.Model(model).Where("id = ?", id).Count(&n).Error; err != nil {
		return false, err
	}
	return n > 0, nil
}

// pickID returns want when set (failing with ErrConflict if taken), or the
// first free slug of name: "w-maya", "w-maya-2", …
func pickID(tx *gorm.DB, model any, kind, prefix, want, name string) (string, error) {
	if want != "" {
		ok, err := exists(tx, model, want)
		if err != nil {
			return "", err
		}
		if ok {
			return "", fmt.Errorf("%s %q already exists: %w", kind, want, domain.ErrConflict)
		}
		return want, nil
	}
	base := domain.Slug(prefix, name)
	for i := 1; i < 1000; i++ {
		id := base
		if i > 1 {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		ok, err := exists(tx, model, id)
		if err != nil {
			return "", err
		}
		if !ok {
			return id, nil
		}
	}
	return base + "-" + domain.RandomSlug(6), nil
}

// Pragmas reports the connection settings in force, for tests and
// `doctor`-style checks: SQLite's pragmas, or PostgreSQL's settings.
func (s *Store) Pragmas(ctx context.Context) (map[string]string, error) {
	return s.dia.settings(ctx, s.db)
}

package store

import (
	"fmt"

	"gorm.io/gorm"
)

// maxIdleConns keeps enough pooled connections open for a burst of
// concurrent readers: database/sql's default of two closes and reopens
// SQLite connections (pragmas and all) under load, and with them the
// statements prepared on them.
const maxIdleConns = 32

// maxPrepared bounds the read statements kept prepared, least recently
// used first out: queries whose IN lists vary have many texts.
const maxPrepared = 512

// tunePool sizes the connection pool and returns the handle reads go
// through. On SQLite it prepares each read's text once per connection
// (GORM's statement cache) instead of on every call, where parsing and
// planning cost as much as running a point lookup. Writes stay on the
// plain handle: statements prepared inside a transaction die with it.
// PostgreSQL's driver caches its statements itself.
func tunePool(db *gorm.DB, dia dialect) (*gorm.DB, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("connection pool: %w", err)
	}
	sqlDB.SetMaxIdleConns(maxIdleConns)
	if dia.name() != "sqlite" {
		return db, nil
	}
	return db.Session(&gorm.Session{PrepareStmt: true}), nil
}

// closeReads closes the read statements GORM prepared, before the database.
func (s *Store) closeReads() {
	if p, ok := s.reads.Statement.ConnPool.(*gorm.PreparedStmtDB); ok {
		p.Close()
	}
}

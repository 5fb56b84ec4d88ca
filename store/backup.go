package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Backup writes a consistent copy of the database to path: SQLite's
// VACUUM INTO or PostgreSQL's pg_dump, each reading one snapshot while
// other connections, a running server's included, go on writing. path must not exist; it is created
// owner-only. The key file is not part of it (KeyFile says where it is).
func (s *Store) Backup(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("back up to %s: the file exists; choose a new name", path)
	}
	if err != nil {
		return fmt.Errorf("back up: %w", err) // err names the path
	}
	f.Close()
	if err := s.dia.backup(ctx, s.db, path); err != nil {
		os.Remove(path)
		return fmt.Errorf("back up to %s: %w", path, err)
	}
	return nil
}

// KeyFile is the path of the key that encrypts secrets at rest.
func (s *Store) KeyFile() string { return s.keyFile }

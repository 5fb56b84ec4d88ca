package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
)

func newBackupCmd() *cobra.Command {
	var cfg dbFlags
	cmd := &cobra.Command{
		Use:   "backup <file>",
		Short: "Write a consistent copy of the database to <file>, and its key file to <file>.key (safe while the server runs)",
		Long: `backup copies the database with SQLite's VACUUM INTO: one consistent
snapshot, taken while a running server goes on writing. The key file that
encrypts its secrets is copied beside it as <file>.key; both are created
owner-only (0600) and neither may exist already. Without the key the
copy's secrets cannot be read, so keep the two together — and somewhere
as safe as the original.

Restore by stopping the server and putting both files in place of the
database and its key file (or pointing --db and --key-file at them).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dst := args[0]
			if _, err := os.Stat(dst + ".key"); err == nil {
				return fmt.Errorf("back up to %s: %s.key exists; choose a new name", dst, dst)
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if err := st.Backup(cmd.Context(), dst); err != nil {
					return err
				}
				key, err := os.ReadFile(st.KeyFile())
				if errors.Is(err, fs.ErrNotExist) {
					fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s (no key file at %s: nothing secret has been set)\n", st.Path(), dst, st.KeyFile())
					return nil
				}
				if err == nil {
					err = writeNew(dst+".key", key)
				}
				if err != nil {
					return fmt.Errorf("copy the key file: %w (the database copy %s is complete, but useless for secrets without it)", err, dst)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s, and its key file to %s.key\n", st.Path(), dst, dst)
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

// writeNew writes a file that must not exist yet, owner-only.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

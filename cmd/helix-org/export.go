package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/orgdir"
)

func newExportCmd() *cobra.Command {
	var cfg dbFlags
	cmd := &cobra.Command{
		Use:   "export <dir>",
		Short: "Write the org as a directory of readable files: roles, positions, workers, grants, streams, subscriptions, skills, config — never secrets",
		Long: `export writes the organisation into a new (or empty) directory: roles and
workers as markdown with front matter, positions, grants, streams (transport
configs without their secrets), subscriptions and config as YAML, and each
skill's source. The same org always gives the same bytes, so an export can
live in git and be diffed. README.txt describes the files and lists the
secrets left out; helix-org import reads the directory back.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				rep, err := orgdir.Export(cmd.Context(), st, args[0], settings())
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "exported the org to %s\n", args[0])
				if len(rep.Secrets) > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "secrets left out (see %s/README.txt):\n", args[0])
					for _, s := range rep.Secrets {
						fmt.Fprintf(cmd.OutOrStdout(), "  - %s\n", s)
					}
				}
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

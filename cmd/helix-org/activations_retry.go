package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/store"
)

func newActivationsRetryCmd() *cobra.Command {
	var cfg dbFlags
	cmd := &cobra.Command{
		Use:          "retry <activation>",
		Short:        "Run an ended activation's triggers again (a failed or cancelled run, say)",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				trigs, err := dispatch.RetryActivation(cmd.Context(), st, args[0])
				for _, t := range trigs {
					fmt.Fprintf(cmd.OutOrStdout(), "Pending again: trigger %d (%s, %s event %s on %s)\n", t.ID, t.WorkerID, t.Kind, t.EventID, t.StreamID)
				}
				return err
			})
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

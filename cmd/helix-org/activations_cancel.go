package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type cancelConfig struct {
	dbFlags
	Drop bool
}

func newActivationsCancelCmd() *cobra.Command {
	var cfg cancelConfig
	cmd := &cobra.Command{
		Use:   "cancel <activation>",
		Short: "Stop a running activation: its agent is killed and its triggers run again (or are dropped with --drop)",
		Long: `cancel records a running activation as cancelled, revokes its token and
hands its triggers back to pending (--drop closes them instead). Its agent
process is killed here; a running server also stops the agent (a container
too) within a second.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				a, err := dispatch.CancelActivation(cmd.Context(), st, args[0], "", cfg.Drop)
				if err != nil {
					return err
				}
				if err := killHere(cmd.Context(), a); err != nil {
					return fmt.Errorf("cancelled %s, but stopping its agent failed (the server stops it when running): %w", a.ID, err)
				}
				then := "its triggers are pending again"
				if cfg.Drop {
					then = "its triggers are dropped"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Cancelled activation %s of %s; %s.\n", a.ID, a.WorkerID, then)
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.Drop, "drop", false, "close the activation's triggers instead of running them again")
	return cmd
}

// killHere stops a cancelled activation's host process, if it has one:
// the server may not be running to do it.
func killHere(ctx context.Context, a domain.Activation) error {
	if a.Process == nil {
		return nil
	}
	kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := agent.StopOrphans(kctx, []domain.Activation{a})
	return err
}

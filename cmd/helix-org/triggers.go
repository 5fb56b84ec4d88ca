package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type triggersConfig struct {
	dbFlags
	Worker string
	Output string
}

func newTriggersCmd() *cobra.Command {
	var cfg triggersConfig
	cmd := &cobra.Command{
		Use:   "triggers",
		Short: "List the triggers not yet delivered — pending, running, parked — with attempts and the last error",
		Long: `triggers lists the dispatcher's queue: every trigger (a reason to wake an AI
worker) that is pending, in a running activation, or parked. A trigger is
parked when its agent failed to start dispatch.max_start_attempts times, or
when it is deeper than dispatch.max_depth (AI workers waking each other in a
loop); it waits for you: release it (it runs again; a loop counts afresh) or
drop it.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				trigs, err := st.ListTriggers(cmd.Context(), store.TriggerQuery{Worker: cfg.Worker,
					Statuses: []domain.TriggerStatus{domain.TriggerPending, domain.TriggerClaimed, domain.TriggerParked}})
				if err != nil {
					return err
				}
				if trigs == nil {
					trigs = []domain.QueuedTrigger{}
				}
				return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"triggers": trigs}, func() error { return writeTriggers(cmd.OutOrStdout(), trigs, st.Now()) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "only this worker's triggers")
	bindData(cmd, &cfg.Output)
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	cmd.AddCommand(
		newTriggersActionCmd("release", "Put parked or pending triggers back to pending with their attempts reset: they run again",
			"Released", dispatch.ReleaseTriggers),
		newTriggersActionCmd("drop", "Close parked or pending triggers without a run (recorded on the trigger and the worker's activation log)",
			"Dropped", dispatch.DropTriggers),
	)
	return cmd
}

type triggerAction func(context.Context, *store.Store, store.TriggerSelection) ([]domain.QueuedTrigger, error)

func newTriggersActionCmd(verb, short, done string, act triggerAction) *cobra.Command {
	var cfg triggersConfig
	cmd := &cobra.Command{
		Use:          verb + " <id>... | --worker <worker>",
		Short:        short,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := selection(args, cfg.Worker)
			if err != nil {
				return err
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				trigs, err := act(cmd.Context(), st, sel)
				if len(trigs) == 0 && err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "No pending or parked triggers for %s.\n", cfg.Worker)
					return nil
				}
				for _, t := range trigs {
					fmt.Fprintf(cmd.OutOrStdout(), "%s trigger %d (%s, %s event %s on %s)\n", done, t.ID, t.WorkerID, t.Kind, t.EventID, t.StreamID)
				}
				return err
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "every pending or parked trigger of this worker")
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	return cmd
}

// selection reads trigger ids or a worker, exactly one of the two.
func selection(args []string, worker string) (store.TriggerSelection, error) {
	if (len(args) == 0) == (worker == "") {
		return store.TriggerSelection{}, errors.New("name trigger ids (see `helix-org triggers`) or --worker <worker>, not both")
	}
	sel := store.TriggerSelection{Worker: worker}
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return store.TriggerSelection{}, fmt.Errorf("trigger id %q is not a positive number (see `helix-org triggers`)", a)
		}
		sel.IDs = append(sel.IDs, id)
	}
	return sel, nil
}

func writeTriggers(w io.Writer, trigs []domain.QueuedTrigger, now time.Time) error {
	return writeTable(w, trigs, "No triggers waiting.", "ID\tWORKER\tSTATUS\tKIND\tEVENT\tSTREAM\tATTEMPTS\tRETRY\tREASON / LAST ERROR", func(t domain.QueuedTrigger) string {
		retry := "-"
		if t.NotBefore != nil && t.Status == domain.TriggerPending {
			retry = "now"
			if t.NotBefore.After(now) {
				retry = "in " + t.NotBefore.Sub(now).Round(time.Second).String()
			}
		}
		why := t.Reason
		if why == "" {
			why = t.LastError
		}
		if t.Status == domain.TriggerClaimed {
			why = "running in " + t.ActivationID
		}
		return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s", t.ID, t.WorkerID, t.Status, t.Kind, t.EventID, t.StreamID,
			t.Attempts, retry, oneLine(clip(why, 120)))
	})
}

package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
)

type tasksConfig struct {
	dbFlags
	Output string
}

func newTasksCmd() *cobra.Command {
	var cfg tasksConfig
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Spec tasks with their state, progress and who works on which item",
		Long: `tasks lists the spec tasks from the database, highest priority first: state,
items done out of all, and for each builder at work its item and for how long.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				tasks, err := st.ListSpecTasks(cmd.Context())
				if err != nil {
					return err
				}
				views := make([]store.SpecTaskView, 0, len(tasks))
				for _, t := range tasks {
					v, err := st.GetSpecTask(cmd.Context(), t.ID)
					if err != nil {
						return err
					}
					views = append(views, v)
				}
				return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"tasks": views}, func() error { return writeTasks(cmd.OutOrStdout(), tasks, views) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	bindData(cmd, &cfg.Output)
	return cmd
}

func writeTasks(out io.Writer, tasks []store.SpecTaskSummary, views []store.SpecTaskView) error {
	if len(tasks) == 0 {
		_, err := fmt.Fprintln(out, "No spec tasks.")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATE\tDONE\tPRIORITY\tTITLE")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%s\n", t.ID, t.State, t.Done, t.Items, t.Priority, t.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range views {
		for _, f := range v.Fleet {
			fmt.Fprintf(out, "  %s: %s on item %d (%s) for %s\n", v.Task.ID, f.Worker, f.Item, f.Title, f.Elapsed)
		}
	}
	return nil
}

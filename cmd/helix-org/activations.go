package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type activationsConfig struct {
	dbFlags
	Worker string
	Output string
}

func newActivationsCmd() *cobra.Command {
	var cfg activationsConfig
	cmd := &cobra.Command{
		Use:   "activations",
		Short: "List agent activations with status, duration and token usage, and each worker's totals",
		Long: `activations lists agent runs, oldest first, with their status, how long they
took, the tokens they used (input/output, as the runtime reported them) and
its label — "untrusted: <the first item from outside it read>" for a run that
read outside input, "readers <who> (since <the first item only they may
read>)" for one that read what only some may read, "-" for neither; then
totals per worker — what each worker has cost.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if cfg.Worker != "" {
					if _, err := st.GetWorker(cmd.Context(), cfg.Worker); err != nil {
						return err
					}
				}
				acts, err := st.ListActivations(cmd.Context(), cfg.Worker)
				if err != nil {
					return err
				}
				if err := explainExits(cmd.Context(), st, acts); err != nil {
					return err
				}
				return emit(cmd.OutOrStdout(), cfg.Output, activationsData(acts), func() error { return writeActivations(cmd.OutOrStdout(), acts) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "only this worker's activations")
	bindData(cmd, &cfg.Output)
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	cmd.AddCommand(newActivationsCancelCmd(), newActivationsRetryCmd())
	return cmd
}

// bareExit is how runs recorded before their agent's reason was kept
// (and runs whose agent said nothing) ended.
var bareExit = domain.LazyRegexp(`^agent exited with status -?\d+$`)

// explainExits adds to a run that failed with only an exit status the
// last error its agent wrote on its activation log, where the real reason
// sits.
func explainExits(ctx context.Context, st *store.Store, acts []domain.Activation) error {
	for i, a := range acts {
		if a.Status != domain.ActivationFailed || !bareExit().MatchString(a.Error) {
			continue
		}
		ev, ok, err := st.LatestLogEntry(ctx, a.WorkerID, a.ID, domain.LogError)
		if err != nil {
			return err
		}
		if ok {
			acts[i].Error = ev.Message.Body + " (" + a.Error + ")"
		}
	}
	return nil
}

// workerUsage is one worker's activations added up.
type workerUsage struct {
	Worker       string `json:"worker"`
	Activations  int    `json:"activations"`
	Failed       int    `json:"failed"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
}

// usageByWorker totals activations per worker, in order of first appearance.
func usageByWorker(acts []domain.Activation) []workerUsage {
	var out []workerUsage
	index := map[string]int{}
	for _, a := range acts {
		i, ok := index[a.WorkerID]
		if !ok {
			i = len(out)
			index[a.WorkerID] = i
			out = append(out, workerUsage{Worker: a.WorkerID})
		}
		out[i].Activations++
		if a.Status == domain.ActivationFailed {
			out[i].Failed++
		}
		out[i].InputTokens += a.InputTokens
		out[i].OutputTokens += a.OutputTokens
	}
	return out
}

// activationsData is what -o json and yaml print: the activations and
// the per-worker totals.
func activationsData(acts []domain.Activation) map[string]any {
	if acts == nil {
		acts = []domain.Activation{}
	}
	totals := usageByWorker(acts)
	if totals == nil {
		totals = []workerUsage{}
	}
	return map[string]any{"activations": acts, "workers": totals}
}

func writeActivations(w io.Writer, acts []domain.Activation) error {
	if len(acts) == 0 {
		_, err := fmt.Fprintln(w, "No activations yet.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTIVATION\tWORKER\tSTATUS\tSTARTED\tDURATION\tIN TOKENS\tOUT TOKENS\tLABEL\tERROR")
	for _, a := range acts {
		dur := "-"
		if a.FinishedAt != nil {
			dur = a.Duration.Round(time.Millisecond).String()
		}
		label := "-"
		if !a.Label.IsZero() {
			label = oneLine(clip(a.Label.String(), 120))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", a.ID, a.WorkerID, a.Status, a.StartedAt.Format("2006-01-02 15:04:05"),
			dur, a.InputTokens, a.OutputTokens, label, oneLine(clip(a.Error, 160)))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "WORKER\tACTIVATIONS\tFAILED\tIN TOKENS\tOUT TOKENS\tTOTAL TOKENS")
	var all workerUsage
	for _, u := range usageByWorker(acts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", u.Worker, u.Activations, u.Failed, u.InputTokens, u.OutputTokens, u.InputTokens+u.OutputTokens)
		all.Activations += u.Activations
		all.Failed += u.Failed
		all.InputTokens += u.InputTokens
		all.OutputTokens += u.OutputTokens
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%d\t%d\n", all.Activations, all.Failed, all.InputTokens, all.OutputTokens, all.InputTokens+all.OutputTokens)
	return tw.Flush()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

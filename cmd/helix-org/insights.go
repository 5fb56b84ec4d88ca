package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
)

func newInsightsCmd() *cobra.Command {
	return group("insights", "The insight memory: its health", newInsightsHealthCmd())
}

type insightsHealthConfig struct {
	dbFlags
	Output string
}

func newInsightsHealthCmd() *cobra.Command {
	var cfg insightsHealthConfig
	cmd := &cobra.Command{
		Use:   "health",
		Short: "What the insight memory holds, what needs a look, and the feedback it gets",
		Long: `health summarises the insight memory: current insights by type and scope,
versions by state (current, superseded, retired); those that need a look —
stale (unused for 30 days), contested (two or more outcomes each way),
quarantined (stored under untrusted integrity, not endorsed), sunk (the
learned ranking puts them last); and the feedback the loop gets — runs shown
insights, runs that cited one, runs' outcomes by source, people's votes.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cfg.open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			h, err := st.MemoryHealth(cmd.Context())
			if err != nil {
				return err
			}
			return emit(cmd.OutOrStdout(), cfg.Output, h, func() error { return writeMemoryHealth(cmd.OutOrStdout(), h) })
		},
	}
	cfg.bind(cmd.Flags())
	bindData(cmd, &cfg.Output)
	return cmd
}

func writeMemoryHealth(out io.Writer, h domain.MemoryHealth) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "CURRENT\t%d\n", h.Current)
	for _, t := range domain.InsightTypes {
		fmt.Fprintf(w, "  type %s\t%d\n", t, h.ByType[t])
	}
	for _, s := range domain.InsightScopes {
		fmt.Fprintf(w, "  scope %s\t%d\n", s, h.ByScope[s])
	}
	fmt.Fprintf(w, "VERSIONS\tcurrent %d, superseded %d, retired %d\n", h.ByState["current"], h.ByState["superseded"], h.ByState["retired"])
	fmt.Fprintf(w, "NEED A LOOK\tstale %d, contested %d, quarantined %d, sunk %d\n", h.Stale, h.Contested, h.Quarantined, h.Sunk)
	f := h.Feedback
	fmt.Fprintf(w, "RUNS\tshown insights %d, cited one %d (%.0f%%)\n", f.RunsShown, f.RunsCiting, 100*f.CiteRate)
	for _, o := range f.Outcomes {
		fmt.Fprintf(w, "  outcome %s from %s\t%d\n", o.Outcome, o.Source, o.Runs)
	}
	fmt.Fprintf(w, "VOTES\t%d from %d people\n", f.Votes, f.Voters)
	return w.Flush()
}

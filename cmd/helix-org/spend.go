package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type spendConfig struct {
	dbFlags
	Since, Until string
	Period       string
	Output       string
}

// spendNote says how spend is counted, under every report.
const spendNote = "Tokens are input plus output as the provider reported them, through the model relay. Money is from llm.prices at the time of each call; " +
	"calls to a model it does not list count tokens but no money (unpricedTokens). Calls of outside MCP servers' tools (outsideCalls, listed under MODEL by their tool's name) cost what mcp.prices says. A run triggered on two streams counts fully in each, so streams may add up to more than the total."

func newSpendCmd() *cobra.Command {
	var cfg spendConfig
	cmd := &cobra.Command{
		Use:   "spend",
		Short: "What model calls cost in a period — tokens and money — by worker, stream and model",
		Long: `spend adds up the model relay's ledger for a period: calls, input and output
tokens, and money at llm.prices as it was when each call was made, in all and
by worker, by stream (the streams of the events that triggered each run) and by
model. Periods are UTC: --period day (today), month (this month, the default)
or all; or --since and --until (RFC 3339, or a date such as 2026-03-01).`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("period") && (cfg.Since != "" || cfg.Until != "") {
				return fmt.Errorf("give --period or --since/--until, not both")
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				since, until, err := cfg.period(st.Now())
				if err != nil {
					return err
				}
				rep, err := st.Spend(cmd.Context(), since, until)
				if err != nil {
					return err
				}
				return emit(cmd.OutOrStdout(), cfg.Output, spendData(rep), func() error { return writeSpend(cmd.OutOrStdout(), rep) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Period, "period", "month", "day, month (calendar, UTC) or all")
	cmd.Flags().StringVar(&cfg.Since, "since", "", "start of the period, inclusive: RFC 3339 or YYYY-MM-DD (UTC)")
	cmd.Flags().StringVar(&cfg.Until, "until", "", "end of the period, exclusive: RFC 3339 or YYYY-MM-DD (UTC)")
	bindData(cmd, &cfg.Output)
	return cmd
}

// period is [since, until) as the flags say; a zero since and a nil until
// are open.
func (c spendConfig) period(now time.Time) (time.Time, *time.Time, error) {
	if c.Since != "" || c.Until != "" {
		since, err := parseWhen("--since", c.Since)
		if err != nil {
			return time.Time{}, nil, err
		}
		until, err := parseWhen("--until", c.Until)
		if err != nil || c.Until == "" {
			return since, nil, err
		}
		if !until.After(since) {
			return time.Time{}, nil, fmt.Errorf("--until %s is not after --since %s", c.Until, c.Since)
		}
		return since, &until, nil
	}
	switch c.Period {
	case "day":
		return domain.BudgetDay.Start(now), nil, nil
	case "month":
		return domain.BudgetMonth.Start(now), nil, nil
	case "all":
		return time.Time{}, nil, nil
	}
	return time.Time{}, nil, fmt.Errorf("--period: unknown period %q (valid: day, month, all)", c.Period)
}

func parseWhen(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s: %q is neither an RFC 3339 time (2026-03-01T00:00:00Z) nor a date (2026-03-01)", flag, v)
}

// spendJSON is spend as `spend --json` prints it.
type spendJSON struct {
	Calls          int64    `json:"calls"`
	OutsideCalls   int64    `json:"outsideCalls"`
	InputTokens    int64    `json:"inputTokens"`
	OutputTokens   int64    `json:"outputTokens"`
	Tokens         int64    `json:"tokens"`
	USD            float64  `json:"usd"`
	UnpricedTokens int64    `json:"unpricedTokens"`
	UnpricedModels []string `json:"unpricedModels,omitempty"`
}

func toSpendJSON(s domain.Spend) spendJSON {
	return spendJSON{Calls: s.Calls, OutsideCalls: s.OutsideCalls, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, Tokens: s.Tokens(),
		USD: s.Money.Dollars(), UnpricedTokens: s.UnpricedTokens, UnpricedModels: s.UnpricedModels}
}

type spendLineJSON struct {
	Worker string `json:"worker,omitempty"`
	Stream string `json:"stream,omitempty"`
	Model  string `json:"model,omitempty"`
	// Priced is false for a model llm.prices did not list for some call.
	Priced *bool `json:"priced,omitempty"`
	spendJSON
}

// spendData is what -o json and yaml print.
func spendData(rep store.SpendReport) map[string]any {
	lines := func(ls []store.SpendLine, set func(*spendLineJSON, string)) []spendLineJSON {
		out := []spendLineJSON{}
		for _, l := range ls {
			j := spendLineJSON{spendJSON: toSpendJSON(l.Spend)}
			set(&j, l.Key)
			out = append(out, j)
		}
		return out
	}
	out := map[string]any{
		"since": nilIfZero(rep.Since), "until": rep.Until, "total": toSpendJSON(rep.Total),
		"workers": lines(rep.Workers, func(j *spendLineJSON, k string) { j.Worker = k }),
		"streams": lines(rep.Streams, func(j *spendLineJSON, k string) { j.Stream = k }),
		"models": lines(rep.Models, func(j *spendLineJSON, k string) {
			priced := j.UnpricedTokens == 0
			j.Model, j.Priced = k, &priced
		}),
		"note": spendNote,
	}
	return out
}

func nilIfZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func writeSpend(w io.Writer, rep store.SpendReport) error {
	from, to := "the start", "now"
	if !rep.Since.IsZero() {
		from = rep.Since.Format(time.RFC3339)
	}
	if rep.Until != nil {
		to = rep.Until.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "Spend from %s to %s (UTC)\n\n", from, to)
	if rep.Total.Calls == 0 && rep.Total.OutsideCalls == 0 {
		_, err := fmt.Fprintln(w, "No model calls in this period.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range []struct {
		title string
		lines []store.SpendLine
	}{{"WORKER", rep.Workers}, {"STREAM", rep.Streams}, {"MODEL", rep.Models}} {
		outside := "" // a column only when there were outside calls
		if rep.Total.OutsideCalls > 0 {
			outside = "OUTSIDE CALLS\t"
		}
		fmt.Fprintf(tw, "%s\tCALLS\t%sIN TOKENS\tOUT TOKENS\tTOTAL TOKENS\tUSD\t\n", g.title, outside)
		for _, l := range g.lines {
			spendRow(tw, l.Key, l.Spend, outside != "")
		}
		spendRow(tw, "all", rep.Total, outside != "")
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.Total.UnpricedTokens > 0 {
		fmt.Fprintf(w, "%s tokens were spent on models llm.prices does not list (%s): they count no money.\n",
			domain.Thousands(rep.Total.UnpricedTokens), strings.Join(rep.Total.UnpricedModels, ", "))
	}
	_, err := fmt.Fprintln(w, spendNote)
	return err
}

func spendRow(w io.Writer, key string, s domain.Spend, outside bool) {
	usd := s.Money.String()
	if s.UnpricedTokens == s.Tokens() && s.Tokens() > 0 {
		usd = "- (not in llm.prices)"
	} else if s.UnpricedTokens > 0 {
		usd += " (+" + domain.Thousands(s.UnpricedTokens) + " unpriced tokens)"
	}
	calls := fmt.Sprint(s.Calls)
	if outside {
		calls += fmt.Sprintf("\t%d", s.OutsideCalls)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\t\n", key, calls, s.InputTokens, s.OutputTokens, s.Tokens(), usd)
}

package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

const outCSV = "csv"

type auditConfig struct {
	dbFlags
	Worker string
	Tool   string
	Since  string
	Limit  int
	Output string
	// NoReads leaves out the reads that succeeded.
	NoReads bool
}

func newAuditCmd() *cobra.Command {
	var cfg auditConfig
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "List the tool calls workers made, newest first, with their arguments (secrets redacted) and how each ended",
		Long: `audit lists the audit of tool calls, newest first: every call of a built-in
tool or a skill, whether it came over MCP, from a task, from the web UI or
from an approval — when, by whom, in which run, with which arguments
(secrets shown as [redacted]), how it ended (ok, error, pending approval,
refused), how long it took and the run's label when it was made. Calls are
kept for audit.retention (720h by default).`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.CallFilter{Worker: cfg.Worker, Tool: cfg.Tool, Limit: cfg.Limit}
			if cfg.NoReads {
				f.QuietTools = tools.ReadOnlyTools()
			}
			since, err := parseSince(cfg.Since, time.Now())
			if err != nil {
				return err
			}
			f.Since = since
			if cfg.Limit < 0 {
				return fmt.Errorf("--limit: must be 0 (the default, %d) or more; got %d", store.DefaultCallLimit, cfg.Limit)
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if cfg.Worker != "" {
					// A dismissed worker's calls are still listed; a typo is an error.
					if _, err := st.GetWorker(cmd.Context(), cfg.Worker); err != nil {
						return fmt.Errorf("--worker: %w", err)
					}
				}
				calls, err := st.ListCalls(cmd.Context(), f)
				if err != nil {
					return err
				}
				if cfg.Output == outCSV {
					return writeCallsCSV(cmd.OutOrStdout(), calls)
				}
				if calls == nil {
					calls = []domain.ToolCall{}
				}
				return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"calls": calls}, func() error { return writeCalls(cmd.OutOrStdout(), calls) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "only this worker's calls (w-…)")
	cmd.Flags().StringVar(&cfg.Tool, "tool", "", "only calls of this tool (e.g. publish, skill_<name>)")
	cmd.Flags().StringVar(&cfg.Since, "since", "", "only calls since then: a duration back from now (24h, 90m) or an RFC 3339 time")
	cmd.Flags().IntVar(&cfg.Limit, "limit", store.DefaultCallLimit, "at most this many calls, newest first")
	cmd.Flags().BoolVar(&cfg.NoReads, "no-reads", false, "leave out calls of tools that change nothing (list_*, get_*, read_events…) that succeeded, as the web UI's Calls page does; failed reads stay")
	bindData(cmd, &cfg.Output, outCSV)
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	return cmd
}

// parseSince reads --since: empty is no bound, a duration counts back
// from now, anything else must be an RFC 3339 time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since: a duration back from now must not be negative; got %q", v)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since: want a duration back from now (24h, 90m) or an RFC 3339 time (2026-01-02T15:04:05Z); got %q", v)
	}
	return t, nil
}

var callColumns = []string{"AT", "WORKER", "RUN", "TOOL", "STATUS", "DURATION", "LABEL", "ARGUMENTS", "ERROR"}

// callRow is a call's columns as the table and CSV print them.
func callRow(c domain.ToolCall, clipped bool) []string {
	run, label, args, errText := c.Activation, "-", domain.ReadableJSON(c.Arguments), c.Error
	if run == "" {
		run = "-"
	}
	if !c.Label.IsZero() {
		label = c.Label.String()
	}
	if c.Approval != "" {
		errText = c.Approval + " " + errText
	}
	if clipped {
		label, args, errText = oneLine(clip(label, 60)), oneLine(clip(args, 120)), oneLine(clip(errText, 120))
	}
	return []string{c.At.Format(time.RFC3339), c.Worker, run, c.Tool, string(c.Status),
		strconv.FormatFloat(c.DurationMs, 'f', 1, 64) + "ms", label, args, errText}
}

func writeCalls(w io.Writer, calls []domain.ToolCall) error {
	return writeTable(w, calls, "No tool calls recorded.", strings.Join(callColumns, "\t"),
		func(c domain.ToolCall) string { return strings.Join(callRow(c, true), "\t") })
}

func writeCallsCSV(w io.Writer, calls []domain.ToolCall) error {
	cw := csv.NewWriter(w)
	cw.Write(callColumns)
	for _, c := range calls {
		cw.Write(callRow(c, false))
	}
	cw.Flush()
	return cw.Error()
}

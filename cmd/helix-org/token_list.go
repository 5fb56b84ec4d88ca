package main

import (
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
)

type tokenListConfig struct {
	dbFlags
	Worker string
	All    bool
	Output string
}

func newTokenListCmd() *cobra.Command {
	var cfg tokenListConfig
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List live tokens: id, worker, kind, what minted it, created, expires, last used (never the secret)",
		Long: `token list shows each token's public id (the first 8 hex digits of its
hash; the secret itself is never stored), its worker and kind (operator;
activation: an agent run's, revoked when the run ends; or oauth: an MCP
client's that logged in, labelled with the client's name), what minted it, when,
when it expires and when it was last used (recorded at most once a minute,
within a second of the use).
Revoke one with helix-org token revoke <id>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				toks, err := st.ListTokens(cmd.Context(), store.TokenQuery{Worker: cfg.Worker, All: cfg.All})
				if err != nil {
					return err
				}
				if toks == nil {
					toks = []store.Token{}
				}
				return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"tokens": toks}, func() error { return writeTokens(cmd.OutOrStdout(), toks) })
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "only this worker's tokens")
	cmd.Flags().BoolVar(&cfg.All, "all", false, "include revoked and expired tokens")
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	bindData(cmd, &cfg.Output)
	return cmd
}

func writeTokens(w io.Writer, toks []store.Token) error {
	return writeTable(w, toks, "No live tokens. Mint one with: helix-org token create <worker>", "ID\tWORKER\tKIND\tLABEL\tCREATED\tEXPIRES\tLAST USED", tokenRow)
}

// tokenRow is a token as writeTokens lists it.
func tokenRow(t store.Token) string {
	expires := "never"
	if t.ExpiresAt != nil {
		expires = when(*t.ExpiresAt)
	}
	if t.RevokedAt != nil {
		expires = "revoked " + when(*t.RevokedAt)
	}
	used := "never"
	if t.LastUsedAt != nil {
		used = when(*t.LastUsedAt)
	}
	label := t.Label
	if t.ActivationID != "" {
		label = "run " + t.ActivationID
	}
	return strings.Join([]string{t.ID, t.WorkerID, t.Kind, orDash(label), when(t.CreatedAt), expires, used}, "\t")
}

// when is a time as a table shows it: the date and minute, in UTC.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

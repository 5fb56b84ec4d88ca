package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
)

type tokenRevokeConfig struct {
	dbFlags
	Worker string
}

func newTokenRevokeCmd() *cobra.Command {
	var cfg tokenRevokeConfig
	cmd := &cobra.Command{
		Use:   "revoke <id> | --worker <worker>",
		Short: "Revoke a token by its id (see token list), or every live token of a worker",
		Long: `token revoke ends a token at once: the next request with it gets 401, and
web sessions signed in with it end. Name one token by the id token list
shows, or --worker for all of that worker's live tokens (agent runs'
included: a running activation loses its endpoint).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel := store.TokenSelection{Worker: cfg.Worker}
			if len(args) == 1 {
				sel.ID = args[0]
			}
			if (sel.ID == "") == (sel.Worker == "") {
				return fmt.Errorf("name a token id (see helix-org token list) or --worker <worker>, not both")
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				toks, err := st.RevokeTokens(cmd.Context(), sel)
				if err != nil {
					return err
				}
				for _, t := range toks {
					fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s, %s, %s)\n", t.ID, t.WorkerID, t.Kind, orDash(t.Label))
				}
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Worker, "worker", "", "revoke every live token of this worker")
	cmd.ValidArgsFunction = cfg.completeFirst(tokenIDs)
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	return cmd
}

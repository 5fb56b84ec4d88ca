package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type tokenConfig struct {
	dbFlags
	URL string
	TTL time.Duration
}

func newTokenCmd() *cobra.Command {
	return group("token", "Mint, list and revoke worker bearer tokens (operator only)", newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd())
}

func newTokenCreateCmd() *cobra.Command {
	var cfg tokenConfig
	cmd := &cobra.Command{
		Use:   "create <worker>",
		Short: "Mint a bearer token for a worker by opening the database directly (operator only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBaseURL(cfg.URL); err != nil {
				return err
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				w, err := st.GetWorker(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if !w.Active() {
					return fmt.Errorf("worker %s has been dismissed", w.ID)
				}
				tok, err := st.CreateToken(cmd.Context(), store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator, TTL: cfg.TTL, Label: "token create"})
				if err != nil {
					return err
				}
				link := ""
				if w.Kind == domain.WorkerHuman {
					if link, err = signInLink(cmd.Context(), st, orgURL(cmd.Context(), cfg.URL), tok); err != nil {
						return err
					}
				}
				printConnect(cmd.OutOrStdout(), orgURL(cmd.Context(), cfg.URL), w.ID, tok, link)
				warnNoServer(cmd, cfg.URL)
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.ValidArgsFunction = cfg.completeFirst(workerNames)
	cmd.Flags().StringVar(&cfg.URL, "url", envOr("HELIX_ORG_URL", "http://127.0.0.1:8080"), "the server's base URL as clients reach it (env HELIX_ORG_URL)")
	cmd.Flags().DurationVar(&cfg.TTL, "ttl", 0, "token lifetime, e.g. 24h; 0 means no expiry")
	return cmd
}

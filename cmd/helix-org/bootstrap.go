package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

type bootstrapConfig struct {
	dbFlags
	URL string
}

func newBootstrapCmd() *cobra.Command {
	var cfg bootstrapConfig
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Create the owner w-owner with every grant (idempotent) and print its MCP URL and a fresh token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cfg.open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			w, err := st.Bootstrap(cmd.Context(), tools.Names())
			if err != nil {
				return err
			}
			tok, err := st.CreateToken(cmd.Context(), store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator})
			if err != nil {
				return err
			}
			printConnect(cmd.OutOrStdout(), cfg.URL, w.ID, tok)
			return nil
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.URL, "url", envOr("HELIX_ORG_URL", "http://127.0.0.1:8080"), "the server's base URL as clients reach it (env HELIX_ORG_URL)")
	return cmd
}

// printConnect shows everything needed to connect an MCP client. The token
// is printed once; only its hash is stored.
func printConnect(w io.Writer, baseURL, worker, tok string) {
	url := fmt.Sprintf("%s/workers/%s/mcp", baseURL, worker)
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"helix-org": map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + tok},
	}}}, "", "  ")
	fmt.Fprintf(w, `Worker:    %s
MCP URL:   %s
Token:     %s
           (shown once; only its hash is stored — mint another with: helix-org token create %s)

Claude Code:
  claude mcp add --transport http helix-org %s --header "Authorization: Bearer %s"

mcp.json:
%s
`, worker, url, tok, worker, url, tok, cfg)
}

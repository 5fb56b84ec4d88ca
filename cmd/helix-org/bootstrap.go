package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

type bootstrapConfig struct {
	dbFlags
	URL  string
	Opts bootstrapOpts
}

// bootstrapOpts are bootstrap's own choices, shared with serve --bootstrap.
type bootstrapOpts struct {
	// NewToken mints another owner token even though the owner exists.
	NewToken bool
	TTL      time.Duration
}

func (o *bootstrapOpts) bind(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.NewToken, "new-token", false, "mint and print another owner token (the first run mints one anyway)")
	cmd.Flags().DurationVar(&o.TTL, "ttl", 0, "lifetime of a token minted now, e.g. 24h; 0 means no expiry")
}

func newBootstrapCmd() *cobra.Command {
	var cfg bootstrapConfig
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Create the owner w-owner with every grant and print its token, or restore it (idempotent) and print how to connect",
		Long: `bootstrap creates the owner, w-owner, holding every tool, and prints its MCP
URL and a token — once, when it creates it. Later runs repair the owner if
something was done to it (and say what), print the URL and a one-time web
sign-in link, and mint no token: the one you have keeps working. Mint
another with --new-token (optionally --ttl), or helix-org token create.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkBaseURL(cfg.URL); err != nil {
				return err
			}
			err := cfg.with(cmd.Context(), func(st *store.Store) error {
				return runBootstrap(cmd.Context(), st, cmd.OutOrStdout(), orgURL(cmd.Context(), cfg.URL), cfg.Opts)
			})
			if err != nil {
				return err
			}
			warnNoServer(cmd, cfg.URL)
			return nil
		},
	}
	cfg.bind(cmd.Flags())
	cfg.bindInit(cmd.Flags())
	cfg.Opts.bind(cmd)
	cmd.AddCommand(newBootstrapHelixCmd())
	cmd.Flags().StringVar(&cfg.URL, "url", envOr("HELIX_ORG_URL", "http://127.0.0.1:8080"), "the server's base URL as clients reach it (env HELIX_ORG_URL)")
	return cmd
}

// runBootstrap creates or restores the owner and prints how to connect.
// A token is minted only when the owner is new or one is asked for, so
// tokens already pasted into clients keep working and none pile up.
func runBootstrap(ctx context.Context, st *store.Store, w io.Writer, baseURL string, o bootstrapOpts) error {
	if o.TTL > 0 && !o.NewToken {
		if _, err := st.GetWorker(ctx, store.OwnerWorker); err == nil {
			return fmt.Errorf("--ttl is for a token minted now, and %s exists: add --new-token", store.OwnerWorker)
		}
	}
	res, err := st.BootstrapReport(ctx, tools.Names())
	if err != nil {
		return err
	}
	printRepaired(w, res.Repaired)
	if res.Created || o.NewToken {
		tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: res.Owner.ID, Kind: store.TokenOperator, TTL: o.TTL, Label: "bootstrap"})
		if err != nil {
			return err
		}
		link, err := signInLink(ctx, st, baseURL, tok)
		if err != nil {
			return err
		}
		printConnect(w, baseURL, res.Owner.ID, tok, link)
		return nil
	}
	live, err := st.ListTokens(ctx, store.TokenQuery{Worker: res.Owner.ID})
	if err != nil {
		return err
	}
	link, err := signInOnly(ctx, st, baseURL, res.Owner.ID)
	if err != nil {
		return err
	}
	printReconnect(w, baseURL, res.Owner.ID, countOwn(live), link)
	return nil
}

// signInLabel labels the token a sign-in link without a printed token
// stands on.
const signInLabel = "web sign-in"

// cliLabels label the tokens the CLI mints for itself, never shown: a web
// sign-in link's, and call's and chat's for one run.
var cliLabels = []string{signInLabel, "call", "chat"}

// countOwn counts the tokens a person minted and pasted somewhere
// (bootstrap, token create): the ones "keep working" speaks of. The CLI's
// own short-lived tokens, agent runs' and MCP clients' are not theirs to
// keep, and counting them told a user of one token that nine kept working.
func countOwn(toks []store.Token) int {
	n := 0
	for _, t := range toks {
		if t.Kind == store.TokenOperator && !slices.Contains(cliLabels, t.Label) {
			n++
		}
	}
	return n
}

// printRepaired says what bootstrap had to put right on an existing owner,
// so an operator who ran it to get back in sees what had been done.
func printRepaired(w io.Writer, repaired []string) {
	if len(repaired) == 0 {
		return
	}
	fmt.Fprintf(w, "Restored %s (recorded on s-org):\n", store.OwnerWorker)
	for _, r := range repaired {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	fmt.Fprintln(w)
}

// signInLink is a one-click web UI sign-in for tok's worker: a single-use
// code, stored hashed and good for store.SignInCodeTTL, that the server
// exchanges for a session (and drops from the address bar).
func signInLink(ctx context.Context, st *store.Store, baseURL, tok string) (string, error) {
	code, err := st.CreateSignInCode(ctx, tok, store.SignInCodeTTL)
	if err != nil {
		return "", err
	}
	return baseURL + "/ui/signin?code=" + code, nil
}

// signInOnly is a sign-in link when no token is printed. A session stands
// on an operator token, so one is minted for it alone, never shown, and
// lasting only as long as a session can: the link's life, then one
// ui.session_ttl. Earlier runs' links never followed are dropped with
// their tokens, so a make run at every restart does not leave one live
// token each (a link printed minutes ago stops working: this one
// replaces it).
func signInOnly(ctx context.Context, st *store.Store, baseURL, worker string) (string, error) {
	if _, err := st.RevokeUnusedTokens(ctx, worker, signInLabel); err != nil {
		return "", err
	}
	ttl := st.DurationSetting(ctx, ui.SessionTTLSetting) + store.SignInCodeTTL
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: worker, Kind: store.TokenOperator, TTL: ttl, Label: signInLabel})
	if err != nil {
		return "", err
	}
	return signInLink(ctx, st, baseURL, tok)
}

// printConnect shows everything needed to connect an MCP client, and a
// web UI sign-in link when there is one. The token is printed once; only
// its hash is stored.
func printConnect(w io.Writer, baseURL, worker, tok, signIn string) {
	url := domain.MCPURL(baseURL, worker)
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{domain.MCPClientName(worker): map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + tok},
	}}}, "", "  ")
	printSignIn(w, signIn)
	fmt.Fprintf(w, `Worker:    %s
MCP URL:   %s
Token:     %s
           (shown once; only its hash is stored — mint another with: helix-org token create %s)

Claude Code:
  claude mcp add --transport http %s %s --header "Authorization: Bearer %s"

mcp.json:
%s
`, worker, url, tok, worker, domain.MCPClientName(worker), url, tok, cfg)
}

// printReconnect is bootstrap's output when the owner already exists: no
// token, and the ways to get one.
func printReconnect(w io.Writer, baseURL, worker string, own int, signIn string) {
	var have string
	switch own {
	case 0:
		have = fmt.Sprintf("none minted, and %s has no token of yours left", worker)
	case 1:
		have = fmt.Sprintf("none minted; %s's 1 token keeps working (helix-org token list shows it)", worker)
	default:
		have = fmt.Sprintf("none minted; %s's %d tokens keep working (helix-org token list shows them)", worker, own)
	}
	printSignIn(w, signIn)
	fmt.Fprintf(w, `Worker:    %s
MCP URL:   %s
Token:     %s
           mint another with: helix-org bootstrap --new-token [--ttl 24h]  (or: helix-org token create %s)
`, worker, domain.MCPURL(baseURL, worker), have, worker)
}

func printSignIn(w io.Writer, link string) {
	if link != "" {
		fmt.Fprintf(w, "Web UI:    %s  (one-time sign-in link, valid %d minutes)\n", link, int(store.SignInCodeTTL.Minutes()))
	}
}

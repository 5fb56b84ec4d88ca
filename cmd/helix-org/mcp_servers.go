package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/store"
)

func newMCPServersCmd() *cobra.Command {
	return group("mcp-servers", "Attach, list and remove outside MCP servers whose tools workers may be granted (operator only)",
		newMCPServersAddCmd(), newMCPServersListCmd(), newMCPServersRemoveCmd())
}

// newGateway is the gateway to outside servers: stdio servers run in the
// host-agent sandbox, or unsandboxed when agent.sandbox is off.
func newGateway(ctx context.Context, st *store.Store, check func() agent.SandboxCheck, dir string, log *slog.Logger) *gateway.Gateway {
	opts := gateway.Options{Dir: filepath.Join(dir, "mcp-servers"), Logger: log}
	if settingOf(ctx, st, agent.SandboxSetting) == agent.SandboxOff {
		opts.Unsandboxed = true
	} else {
		opts.Sandbox = func() *agent.Bwrap {
			if c := check(); c.Err == nil && c.Bwrap != "" {
				return &agent.Bwrap{Path: c.Bwrap}
			}
			return nil
		}
	}
	return gateway.New(st, opts)
}

func settingOf(ctx context.Context, st *store.Store, spec domain.SettingSpec) string {
	v, _ := st.SettingOr(ctx, spec)
	return v
}

type mcpServersAddConfig struct {
	dbFlags
	URL      string
	Command  string
	Args     []string
	Env      []string
	AuthFile string
	Trusted  bool
	Timeout  time.Duration
	EnvsDir  string
}

func newMCPServersAddCmd() *cobra.Command {
	var cfg mcpServersAddConfig
	cmd := &cobra.Command{
		Use:   "add <name> (--url <url> | --command <program> [--arg <arg>]…) [--auth-file <file>]",
		Short: "Attach an outside MCP server and fetch its tools; the owner is granted them all",
		Long: `mcp-servers add attaches an MCP server over Streamable HTTP (--url) or a
program helix-org runs and talks to over stdio (--command, in the
host-agent sandbox). Its tools become grantable as <name>__<tool>.

The credential is read from --auth-file (- for stdin), never from the
command line, and stored encrypted; agents never see it. It is one of
  {"type":"bearer","token":"…"}
  {"type":"oauth_client","token_url":"…","client_id":"…","client_secret":"…","scopes":["…"]}
  {"type":"github_app","app_id":1,"private_key":"-----BEGIN …","installation_id":2,"api_url":"https://api.github.com"}`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := cfg.server(args[0])
			if err != nil {
				return err
			}
			auth, err := readAuth(cmd.InOrStdin(), cfg.AuthFile)
			if err != nil {
				return err
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if _, err := st.AddMCPServer(cmd.Context(), "", srv, auth); err != nil {
					return err
				}
				g := newGateway(cmd.Context(), st, agent.CheckSandbox(cmd.Context(), "").Result, orgEnvs(cfg.EnvsDir, orgOf(cmd.Context())), nil)
				defer g.Close()
				added, err := g.Refresh(cmd.Context(), srv.Name)
				if err != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "added %s, unhealthy: %v (calls try again)\n", added.Name, err)
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added %s: %d tools\n", added.Name, len(added.Tools))
				for _, t := range added.Tools {
					fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", t.ToolName())
				}
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&cfg.URL, "url", "", "the server's Streamable HTTP endpoint")
	f.StringVar(&cfg.Command, "command", "", "the program to run over stdio")
	f.StringArrayVar(&cfg.Args, "arg", nil, "an argument of --command (repeat)")
	f.StringArrayVar(&cfg.Env, "env", nil, "KEY=VALUE in --command's environment: settings, not secrets (repeat)")
	f.StringVar(&cfg.AuthFile, "auth-file", "", "JSON file of the credential (- for stdin)")
	f.BoolVar(&cfg.Trusted, "trusted", false, "trust its results (by default they are untrusted)")
	f.DurationVar(&cfg.Timeout, "timeout", 0, "longest one call may take (default: the setting mcp.call_timeout)")
	f.StringVar(&cfg.EnvsDir, "envs-dir", envOr("HELIX_ORG_ENVS_DIR", "./envs"), "directory of worker environments; stdio servers run in <envs-dir>/mcp-servers (env HELIX_ORG_ENVS_DIR)")
	return cmd
}

func (cfg mcpServersAddConfig) server(name string) (domain.MCPServer, error) {
	srv := domain.MCPServer{Name: name, URL: cfg.URL, Command: cfg.Command, Args: cfg.Args, Trusted: cfg.Trusted, Timeout: cfg.Timeout, Transport: domain.MCPHTTP}
	if (cfg.URL == "") == (cfg.Command == "") {
		return srv, fmt.Errorf("give --url (Streamable HTTP) or --command (stdio), one of them")
	}
	if cfg.Command != "" {
		srv.Transport = domain.MCPStdio
	}
	for _, kv := range cfg.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return srv, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[k] = v
	}
	return srv, srv.Validate()
}

func readAuth(stdin io.Reader, path string) (*domain.MCPAuth, error) {
	if path == "" {
		return nil, nil
	}
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--auth-file: %w", err)
	}
	var a domain.MCPAuth
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("--auth-file: not a credential object: %v", err)
	}
	return &a, a.Validate()
}

func newMCPServersListCmd() *cobra.Command {
	var cfg dbFlags
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List outside MCP servers: transport, health and tool count",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				servers, err := st.ListMCPServers(cmd.Context())
				if err != nil {
					return err
				}
				if servers == nil {
					servers = []domain.MCPServer{}
				}
				return emit(cmd.OutOrStdout(), output, map[string]any{"servers": servers}, func() error {
					tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tTRANSPORT\tHEALTHY\tTOOLS\tAUTH\tTRUSTED\tERROR")
					for _, s := range servers {
						fmt.Fprintf(tw, "%s\t%s\t%t\t%d\t%s\t%t\t%s\n", s.Name, s.Transport, s.Healthy, len(s.Tools), orDash(s.AuthType), s.Trusted, orDash(s.Error))
					}
					return tw.Flush()
				})
			})
		},
	}
	cfg.bind(cmd.Flags())
	bindData(cmd, &output)
	return cmd
}

func newMCPServersRemoveCmd() *cobra.Command {
	var cfg dbFlags
	cmd := &cobra.Command{
		Use:   "remove <name>",
		Short: "Remove an outside MCP server, its credential and every grant of its tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if err := st.RemoveMCPServer(cmd.Context(), "", args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

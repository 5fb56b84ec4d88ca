package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type chatConfig struct {
	dbFlags
	URL     string
	EnvsDir string
	Worker  string
	New     bool
	Resume  string
	Verbose bool
}

func newChatCmd() *cobra.Command {
	var cfg chatConfig
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat as a worker (default w-owner) through Claude Code, or the built-in agent, connected to its MCP endpoint",
		Long: `chat starts Claude Code in the worker's chat directory with the worker's
MCP endpoint configured. Without Claude Code on PATH it chats through the
built-in agent (agent.provider, agent.model, agent.api_key or agent.base_url)
instead, keeping the conversation in the chat directory. It resumes that
directory's last session when there is one; --new starts fresh and
--resume <id> picks a session.

In the built-in agent's chat, "/name args" runs the worker's MCP prompt of
that name (expanded on the server, e.g. /role Support Engineer or
/hire r-support-engineer), /help lists them with the tools, and each tool
call and result is shown as it happens (in full with --verbose).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, cfg) },
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().StringVar(&cfg.URL, "url", envOr("HELIX_ORG_URL", "http://127.0.0.1:8080"), "the server's base URL (env HELIX_ORG_URL)")
	cmd.Flags().StringVar(&cfg.EnvsDir, "envs-dir", envOr("HELIX_ORG_ENVS_DIR", "./envs"), "directory of worker environments (env HELIX_ORG_ENVS_DIR)")
	cmd.Flags().StringVar(&cfg.Worker, "worker", store.OwnerWorker, "the worker to chat as")
	cmd.Flags().BoolVar(&cfg.New, "new", false, "start a new session instead of resuming the last one")
	cmd.Flags().StringVar(&cfg.Resume, "resume", "", "resume this session id (Claude Code's, or the built-in agent's)")
	cmd.Flags().BoolVar(&cfg.Verbose, "verbose", false, "built-in agent: show each tool call's arguments and result in full, not one line each")
	cmd.MarkFlagsMutuallyExclusive("new", "resume")
	cmd.RegisterFlagCompletionFunc("worker", cfg.complete(workerNames))
	return cmd
}

// sessionFile remembers the chat directory's last session id.
const sessionFile = ".helix-chat-session"

func runChat(cmd *cobra.Command, cfg chatConfig) error {
	if err := checkBaseURL(cfg.URL); err != nil {
		return err
	}
	claude, err := exec.LookPath("claude")
	if err != nil {
		// No Claude Code: chat through the built-in agent, if configured.
		return runBuiltinChat(cmd, cfg)
	}
	ctx := cmd.Context()
	st, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	w, dir, err := chatDir(ctx, st, cfg)
	if err != nil {
		return err
	}
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator, TTL: 24 * time.Hour, Label: "chat"})
	if err != nil {
		return err
	}
	defer st.RevokeToken(ctx, tok)
	// The chat's token and URL go to Claude Code in its environment, which
	// mcp.json refers to: no file under the envs directory holds a token.
	name := domain.MCPClientName(w.ID)
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), domain.MCPConfigNamed(name), 0o600); err != nil {
		return fmt.Errorf("write mcp.json: %w", err)
	}
	session, err := chatSession(dir, cfg)
	if err != nil {
		return err
	}
	c := exec.CommandContext(ctx, claude, append(session,
		"--mcp-config", "mcp.json", "--allowedTools", "mcp__"+name,
		"--append-system-prompt", fmt.Sprintf("You are %s (%s) in a helix-org organisation. Act on the org through the helix-org MCP tools.", w.Name, w.ID))...)
	c.Dir = dir
	c.Env = append(os.Environ(), domain.TokenEnv+"="+tok, domain.MCPURLEnv+"="+domain.MCPURL(orgURL(ctx, cfg.URL), w.ID))
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := c.Run(); err != nil {
		return fmt.Errorf("claude: %w", err)
	}
	return nil
}

// chatDir is the worker's chat directory, created if need be; a
// dismissed worker cannot chat.
func chatDir(ctx context.Context, st *store.Store, cfg chatConfig) (domain.Worker, string, error) {
	w, err := st.GetWorker(ctx, cfg.Worker)
	if err != nil {
		return domain.Worker{}, "", err
	}
	if !w.Active() {
		return domain.Worker{}, "", fmt.Errorf("worker %s has been dismissed", w.ID)
	}
	dir := filepath.Join(orgEnvs(cfg.EnvsDir, orgOf(ctx)), w.ID, "chat")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return domain.Worker{}, "", fmt.Errorf("create chat dir: %w", err)
	}
	return w, dir, nil
}

// chatSession returns the claude flags that pick the session: the one
// asked for, the directory's last one, or a fresh one whose id is recorded.
func chatSession(dir string, cfg chatConfig) ([]string, error) {
	path := filepath.Join(dir, sessionFile)
	if cfg.Resume != "" {
		return []string{"--resume", cfg.Resume}, os.WriteFile(path, []byte(cfg.Resume), 0o600)
	}
	if last, err := os.ReadFile(path); err == nil && !cfg.New && strings.TrimSpace(string(last)) != "" {
		return []string{"--resume", strings.TrimSpace(string(last))}, nil
	}
	id := newUUID()
	return []string{"--session-id", id}, os.WriteFile(path, []byte(id), 0o600)
}

// newUUID returns a random RFC 4122 version-4 UUID, the form claude's
// --session-id takes.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

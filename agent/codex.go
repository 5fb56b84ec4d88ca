package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/helixml/helix-org/domain"
)

// Codex runs the Codex CLI one-shot (`codex exec`) in the worker's
// directory and turns its JSONL events into activation-log entries.
type Codex struct {
	// Bin is the codex executable; default "codex" on PATH.
	Bin   string
	Model string
	// Isolated is true only inside a container: see config.
	Isolated bool
	// Sandbox, when set, is where Codex runs on the host; nil runs it as
	// the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*Codex)(nil)

// CodexHome is the directory, in the worker's, that Codex gets as
// CODEX_HOME: its config.toml and its sessions, which outlive the run (a
// sandbox's HOME does not) so the next run can resume one.
const CodexHome = ".codex"

// codexConfig is the part of Codex's config.toml a run writes.
type codexConfig struct {
	Model          string                    `toml:"model,omitempty"`
	ApprovalPolicy string                    `toml:"approval_policy"`
	SandboxMode    string                    `toml:"sandbox_mode"`
	Workspace      codexWorkspace            `toml:"sandbox_workspace_write"`
	MCPServers     map[string]codexMCPServer `toml:"mcp_servers"`
}

type codexWorkspace struct {
	NetworkAccess bool `toml:"network_access"`
}

// codexMCPServer is a streamable HTTP server: the token is named by its
// variable (bearer_token_env_var), never written.
type codexMCPServer struct {
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers,omitempty"`
}

// CodexConfig renders the config.toml of a run: the worker's endpoint as
// the only MCP server, no approval prompts (no one is there to answer),
// and Codex's own sandbox kept to the worker's directory with no network
// for its shell commands.
func CodexConfig(run domain.Run, model string) ([]byte, error) {
	return (&Codex{Model: model}).config(run)
}

// config is CodexConfig; in a container, which is its sandbox, Codex's
// own is off ("danger-full-access"), as Codex advises where Landlock and
// seccomp cannot nest.
func (c *Codex) config(run domain.Run) ([]byte, error) {
	mode := "workspace-write"
	if c.Isolated {
		mode = "danger-full-access"
	}
	cfg := codexConfig{Model: c.Model, ApprovalPolicy: "never", SandboxMode: mode,
		MCPServers: map[string]codexMCPServer{domain.MCPServerName: {URL: run.MCPURL, BearerTokenEnvVar: domain.TokenEnv,
			HTTPHeaders: map[string]string{domain.ToolSearchHeader: "off"}}}}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return nil, fmt.Errorf("codex runtime: render config.toml: %w", err)
	}
	return buf.Bytes(), nil
}

// Args builds the codex command line: `-` makes `codex exec` read the
// prompt from stdin; a session to continue goes to `exec resume <id>`.
func (c *Codex) Args(run domain.Run) []string {
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	args = withFlag(args, "--model", c.Model)
	args = withFlag(args, "resume", run.Session)
	return append(args, "-")
}

// Run carries out one activation.
func (c *Codex) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return runCLI(ctx, run, c.Sandbox, "codex", "the Codex CLI", c.Invocation)
}

// Invocation is how codex runs for run: its config.toml in CODEX_HOME,
// the prompt on stdin, its JSONL events on stdout.
func (c *Codex) Invocation(run domain.Run) (Invocation, error) {
	cfg, err := c.config(run)
	if err != nil {
		return Invocation{}, err
	}
	home := filepath.Join(run.EnvDir, CodexHome)
	// OPENAI_BASE_URL and OPENAI_API_KEY (the run's token) come from
	// RunEnv; `codex exec` also reads its key from CODEX_API_KEY.
	return Invocation{Bin: cmp.Or(c.Bin, "codex"), Args: c.Args(run), Files: map[string][]byte{filepath.Join(CodexHome, "config.toml"): cfg},
		Env: []string{"CODEX_HOME=" + home, "CODEX_API_KEY=" + run.Token}, Feed: FeedText(run.Prompt), Line: eventLines(parseCodexJSON)}, nil
}

// codexEvent is the subset of `codex exec --json` events we read.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Status    string          `json:"status"`
	} `json:"item"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// parseCodexJSON logs one event and notes the session and token use.
func parseCodexJSON(ev codexEvent, log func(domain.LogEntry), res *domain.RunResult) {
	switch ev.Type {
	case "thread.started":
		res.Session = ev.ThreadID
	case "item.completed":
		switch ev.Item.Type {
		case "agent_message":
			log(domain.LogEntry{Kind: domain.LogAssistant, Text: ev.Item.Text})
		case "mcp_tool_call":
			log(domain.LogEntry{Kind: domain.LogToolCall, Tool: ev.Item.Tool, Text: string(ev.Item.Arguments)})
		}
	case "turn.completed":
		res.InputTokens += ev.Usage.InputTokens
		res.OutputTokens += ev.Usage.OutputTokens
	case "turn.failed":
		log(domain.LogEntry{Kind: domain.LogError, Text: ev.Error.Message})
	case "error":
		log(domain.LogEntry{Kind: domain.LogError, Text: ev.Message})
	}
}

package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

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

// CodexConfig renders the config.toml of a run: the worker's endpoint as
// the only MCP server, no approval prompts (no one is there to answer),
// and Codex's own sandbox kept to the worker's directory with no network
// for its shell commands.
func CodexConfig(run domain.Run, model string) ([]byte, error) {
	return (&Codex{Model: model}).config(run)
}

// config is CodexConfig; in a container, which is its sandbox, Codex's
// own is off ("danger-full-access"), as Codex advises where Landlock and
// seccomp cannot nest. Its shape is fixed, so it is written out here: a
// TOML library would cost every start its package initialisation.
func (c *Codex) config(run domain.Run) ([]byte, error) {
	mode := "workspace-write"
	if c.Isolated {
		mode = "danger-full-access"
	}
	var b strings.Builder
	if c.Model != "" {
		fmt.Fprintf(&b, "model = %s\n", tomlString(c.Model))
	}
	fmt.Fprintf(&b, "approval_policy = %s\nsandbox_mode = %s\n\n", tomlString("never"), tomlString(mode))
	// Shell commands get no network (workspace-write only).
	b.WriteString("[sandbox_workspace_write]\nnetwork_access = false\n\n")
	// The token is named by its variable (bearer_token_env_var), never
	// written.
	server := "mcp_servers." + tomlString(domain.MCPServerName)
	fmt.Fprintf(&b, "[%s]\nurl = %s\nbearer_token_env_var = %s\n\n", server, tomlString(run.MCPURL), tomlString(domain.TokenEnv))
	fmt.Fprintf(&b, "[%s.http_headers]\n%s = %s\n", server, tomlString(domain.ToolSearchHeader), tomlString("off"))
	return []byte(b.String()), nil
}

// tomlString is s as a TOML basic string, which also serves as a quoted
// key: quotes and backslashes escaped, control characters as escapes.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
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
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Status    string          `json:"status"`
		// Result and Error are an mcp_tool_call's outcome, one or the
		// other once it has completed.
		Result *struct {
			Content           json.RawMessage `json:"content"`
			StructuredContent json.RawMessage `json:"structured_content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"item"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// codexToolResult is a completed mcp_tool_call's outcome as the run's log
// shows tool results: the result's text blocks, else its structured
// content, or "error: " and why.
func codexToolResult(ev codexEvent) string {
	it := ev.Item
	switch {
	case it.Error != nil:
		return "error: " + it.Error.Message
	case it.Result == nil:
		return "error: the call " + cmp.Or(it.Status, "ended") + " with no result"
	}
	text := toolResultText(it.Result.Content)
	if text == "" && len(it.Result.StructuredContent) > 0 && string(it.Result.StructuredContent) != "null" {
		return string(it.Result.StructuredContent)
	}
	if it.Status == "failed" {
		return "error: " + text
	}
	return text
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
			log(domain.LogEntry{Kind: domain.LogToolCall, Tool: ev.Item.Tool, CallID: ev.Item.ID, Text: string(ev.Item.Arguments)})
			log(domain.LogEntry{Kind: domain.LogToolResult, CallID: ev.Item.ID, Text: codexToolResult(ev)})
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

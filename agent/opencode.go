package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// OpenCode runs `opencode run` (prompt piped on stdin) in the worker's
// directory and turns its JSON events into activation-log entries.
type OpenCode struct {
	// Bin is the opencode executable; default "opencode" on PATH.
	Bin string
	// Model is agent.model, an Anthropic model: OpenCode reaches it
	// through the server's Anthropic relay.
	Model string
	// Sandbox, when set, is where OpenCode runs on the host; nil runs it
	// as the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*OpenCode)(nil)

// OpenCodeData is the directory, in the worker's, that OpenCode gets as
// XDG_DATA_HOME: its sessions outlive the run there for the next to
// resume.
const OpenCodeData = ".opencode"

// OpenCodeConfig renders opencode.json: the worker's endpoint as the only
// MCP server, the Anthropic provider pointed at the relay, every secret
// as {env:…}, which OpenCode substitutes from its environment; and no
// shell or web fetch: the agent acts through helix-org and on files in
// its directory.
func OpenCodeConfig(run domain.Run, model string) []byte {
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"mcp": map[string]any{domain.MCPServerName: map[string]any{
			"type": "remote", "url": run.MCPURL, "enabled": true,
			"headers": map[string]string{"Authorization": "Bearer {env:" + domain.TokenEnv + "}", domain.ToolSearchHeader: "off"},
		}},
		// The AI SDK's Anthropic base URL ends in /v1, where the relay's
		// Anthropic base (for SDKs that append /v1/messages) does not.
		"provider": map[string]any{"anthropic": map[string]any{"options": map[string]string{
			"baseURL": "{env:ANTHROPIC_BASE_URL}/v1", "apiKey": "{env:ANTHROPIC_API_KEY}"}}},
		"permission": map[string]string{"bash": "deny", "webfetch": "deny", "edit": "allow"},
		"autoupdate": false,
		"share":      "disabled",
	}
	if model != "" {
		cfg["model"] = "anthropic/" + model
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return append(b, '\n')
}

// Args builds the opencode command line; with no message argument,
// `opencode run` reads the message from its piped stdin.
func (o *OpenCode) Args(run domain.Run) []string {
	args := []string{"run", "--format", "json"}
	if o.Model != "" {
		args = append(args, "--model", "anthropic/"+o.Model)
	}
	args = withFlag(args, "--session", run.Session)
	return args
}

// Run carries out one activation.
func (o *OpenCode) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return runCLI(ctx, run, o.Sandbox, "opencode", "OpenCode", o.Invocation)
}

// Invocation is how opencode runs for run: opencode.json in the worker's
// directory, the prompt piped on stdin, JSON events on stdout.
func (o *OpenCode) Invocation(run domain.Run) (Invocation, error) {
	return Invocation{Bin: cmp.Or(o.Bin, "opencode"), Args: o.Args(run), Files: map[string][]byte{"opencode.json": OpenCodeConfig(run, o.Model)},
		Dirs: []string{OpenCodeData},
		Env: []string{"OPENCODE_CONFIG=" + filepath.Join(run.EnvDir, "opencode.json"), "XDG_DATA_HOME=" + filepath.Join(run.EnvDir, OpenCodeData),
			"OPENCODE_DISABLE_AUTOUPDATE=1"},
		Feed: FeedText(run.Prompt), Line: eventLines(parseOpenCodeJSON)}, nil
}

// openCodeEvent is the subset of `opencode run --format json` events we
// read: each carries the session's id and one part of a message.
type openCodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Output string          `json:"output"`
		} `json:"state"`
		Tokens struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
		} `json:"tokens"`
	} `json:"part"`
	Error struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// parseOpenCodeJSON logs one event and notes the session and token use.
func parseOpenCodeJSON(ev openCodeEvent, log func(domain.LogEntry), res *domain.RunResult) {
	if ev.SessionID != "" {
		res.Session = ev.SessionID
	}
	switch ev.Type {
	case "text":
		log(domain.LogEntry{Kind: domain.LogAssistant, Text: ev.Part.Text})
	case "tool_use":
		log(domain.LogEntry{Kind: domain.LogToolCall, Tool: ev.Part.Tool, Text: string(ev.Part.State.Input)})
		text := ev.Part.State.Output
		if ev.Part.State.Status == "error" {
			text = "error: " + text
		}
		log(domain.LogEntry{Kind: domain.LogToolResult, Tool: ev.Part.Tool, Text: text})
	case "step_finish":
		res.InputTokens += ev.Part.Tokens.Input
		res.OutputTokens += ev.Part.Tokens.Output
	case "error":
		log(domain.LogEntry{Kind: domain.LogError, Text: strings.TrimSpace(ev.Error.Name + ": " + ev.Error.Data.Message)})
	}
}

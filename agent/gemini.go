package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/helixml/helix-org/domain"
)

// Gemini runs Gemini CLI headless (prompt piped on stdin) in the worker's
// directory and turns its stream-json events into activation-log entries.
type Gemini struct {
	// Bin is the gemini executable; default "gemini" on PATH.
	Bin   string
	Model string
	// Sandbox, when set, is where Gemini CLI runs on the host; nil runs
	// it as the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*Gemini)(nil)

// GeminiSettings renders .gemini/settings.json: the worker's endpoint as
// the only MCP server ($HELIX_ORG_TOKEN is expanded by Gemini CLI from its
// environment, so the file holds no secret), trusted so its calls need no
// confirmation (no one is there to give it; the server gates them), and
// no shell or web tools: the agent acts through helix-org and on files in
// its directory.
func GeminiSettings(run domain.Run) []byte {
	b, _ := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{domain.MCPServerName: map[string]any{
			"httpUrl": run.MCPURL, "trust": true,
			"headers": map[string]string{"Authorization": "Bearer $" + domain.TokenEnv, domain.ToolSearchHeader: "off"},
		}},
		"mcp":     map[string]any{"allowed": []string{domain.MCPServerName}},
		"tools":   map[string]any{"exclude": []string{"run_shell_command", "web_fetch", "google_web_search"}},
		"privacy": map[string]any{"usageStatisticsEnabled": false},
	}, "", "  ")
	return append(b, '\n')
}

// Args builds the gemini command line; the prompt is piped on stdin,
// which runs Gemini CLI headless.
func (g *Gemini) Args(run domain.Run) []string {
	args := []string{"--output-format", "stream-json", "--allowed-mcp-server-names", domain.MCPServerName}
	args = withFlag(args, "--model", g.Model)
	args = withFlag(args, "--resume", run.Session)
	return args
}

// Run carries out one activation.
func (g *Gemini) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return runCLI(ctx, run, g.Sandbox, "gemini", "Gemini CLI", g.Invocation)
}

// Invocation is how gemini runs for run: .gemini/settings.json in the
// worker's directory, the prompt piped on stdin, stream-json on stdout.
func (g *Gemini) Invocation(run domain.Run) (Invocation, error) {
	// GEMINI_CLI_HOME is the worker's directory, so ~/.gemini, where its
	// sessions are kept, outlives the run for the next to resume.
	// GOOGLE_GEMINI_BASE_URL is the relay's Gemini API, which calls Google
	// with agent.gemini.api_key: the run's token (GEMINI_API_KEY) never
	// leaves the server.
	env := []string{"GEMINI_CLI_HOME=" + run.EnvDir, "GEMINI_API_KEY=" + run.Token}
	if run.BaseURL != "" {
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+domain.RelayURL(run.BaseURL, domain.RelayGemini))
	}
	return Invocation{Bin: cmp.Or(g.Bin, "gemini"), Args: g.Args(run), Files: map[string][]byte{filepath.Join(".gemini", "settings.json"): GeminiSettings(run)},
		Env: env, Feed: FeedText(run.Prompt), Line: eventLines(parseGeminiJSON)}, nil
}

// geminiEvent is the subset of Gemini CLI's stream-json events we read.
type geminiEvent struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Output     string          `json:"output"`
	Status     string          `json:"status"`
	Message    string          `json:"message"`
	Stats      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"stats"`
}

// parseGeminiJSON logs one event and notes the session and token use.
func parseGeminiJSON(ev geminiEvent, log func(domain.LogEntry), res *domain.RunResult) {
	switch ev.Type {
	case "init":
		res.Session = ev.SessionID
	case "message":
		if ev.Role == "assistant" {
			log(domain.LogEntry{Kind: domain.LogAssistant, Text: ev.Content})
		}
	case "tool_use":
		log(domain.LogEntry{Kind: domain.LogToolCall, Tool: ev.ToolName, CallID: ev.ToolID, Text: string(ev.Parameters)})
	case "tool_result":
		text := ev.Output
		if ev.Status == "error" {
			text = "error: " + text
		}
		log(domain.LogEntry{Kind: domain.LogToolResult, CallID: ev.ToolID, Text: text})
	case "error":
		log(domain.LogEntry{Kind: domain.LogError, Text: ev.Message})
	case "result":
		res.InputTokens += ev.Stats.InputTokens
		res.OutputTokens += ev.Stats.OutputTokens
	}
}

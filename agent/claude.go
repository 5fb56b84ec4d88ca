package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// Claude runs Claude Code one-shot in the worker's environment directory
// and turns its stream-json output into activation-log entries.
type Claude struct {
	// Bin is the claude executable; default "claude" on PATH.
	Bin    string
	Model  string
	Effort string
	// Isolated is true only inside a container: then, and only then, the
	// permission prompts are bypassed. On the host the agent may use only
	// its helix-org MCP tools.
	Isolated bool
	// Sandbox, when set, is where Claude Code runs on the host; nil runs
	// it as the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*Claude)(nil)

// ClaudeConfigDir is the directory, in the worker's, that Claude Code
// gets as CLAUDE_CONFIG_DIR.
const ClaudeConfigDir = ".claude"

// Args builds the claude command line. The prompt is not on it: with
// `--input-format stream-json`, `claude -p` reads its prompt from stdin as
// a user message, which takes any size, where one argument over 128 KiB
// fails exec; and stdin stays open for the messages sent to the run.
func (c *Claude) Args(run domain.Run) []string {
	args := []string{"-p", "--input-format", "stream-json", "--mcp-config", "mcp.json", "--output-format", "stream-json", "--verbose"}
	args = withFlag(args, "--model", c.Model)
	args = withFlag(args, "--effort", c.Effort)
	args = withFlag(args, "--resume", run.Session)
	if c.Isolated {
		return append(args, "--dangerously-skip-permissions")
	}
	return append(args, "--strict-mcp-config", "--permission-mode", "default", "--allowedTools", "mcp__"+domain.MCPServerName)
}

// Run carries out one activation.
func (c *Claude) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	return runCLI(ctx, run, c.Sandbox, "claude", "Claude Code", c.Invocation)
}

// Invocation is how claude runs for run: mcp.json (which dispatch writes)
// in the worker's directory, the prompt and the messages sent to the run
// on stdin (claudeInput), stream-json on stdout.
func (c *Claude) Invocation(run domain.Run) (Invocation, error) {
	in := newClaudeInput(run)
	// RunEnv points Claude Code at the server's relay (ANTHROPIC_BASE_URL,
	// ANTHROPIC_API_KEY = the run's token); its other traffic (telemetry,
	// updates, error reports) has no business leaving a server's agent.
	// CLAUDE_CONFIG_DIR keeps its sessions in the worker's directory,
	// where they outlive the run (a sandbox's HOME does not) for --resume.
	return Invocation{Bin: cmp.Or(c.Bin, "claude"), Args: c.Args(run),
		Env:  []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CONFIG_DIR=" + filepath.Join(run.EnvDir, ClaudeConfigDir)},
		Feed: in.feed,
		Line: func(line string, log func(domain.LogEntry), res *domain.RunResult) {
			in.saw(parseStreamJSON(line, log, res))
		}}, nil
}

// streamMsg is the subset of Claude Code's stream-json we read.
type streamMsg struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	// Errors is what a result of an error_* subtype says went wrong; such
	// a result may have no Result.
	Errors []string `json:"errors"`
	// SessionID, on the init message, is what `--resume` takes.
	SessionID string `json:"session_id"`
	Message   struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			// ID is a tool_use's; ToolUseID names the tool_use a
			// tool_result answers.
			ID        string          `json:"id"`
			ToolUseID string          `json:"tool_use_id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		} `json:"content"`
	} `json:"message"`
	// Usage's input_tokens leaves out what the prompt cache wrote and
	// read; the run read those too, and the relay counts them as input.
	Usage struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	} `json:"usage"`
}

// parseStreamJSON logs one line of stream-json and returns its type;
// lines that are not JSON are logged as plain output so nothing the agent
// says is lost.
func parseStreamJSON(line string, log func(domain.LogEntry), res *domain.RunResult) string {
	var m streamMsg
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		if strings.TrimSpace(line) != "" {
			log(domain.LogEntry{Kind: domain.LogOutput, Text: line})
		}
		return ""
	}
	switch m.Type {
	case "system":
		switch m.Subtype {
		case "init":
			res.Session = m.SessionID
		case "api_retry":
			if note, ok := retryNote([]byte(line)); ok {
				log(domain.LogEntry{Kind: domain.LogNote, Text: note})
			}
		}
	case "assistant":
		for _, c := range m.Message.Content {
			switch c.Type {
			case "text":
				log(domain.LogEntry{Kind: domain.LogAssistant, Text: c.Text})
			case "tool_use":
				log(domain.LogEntry{Kind: domain.LogToolCall, Tool: c.Name, CallID: c.ID, Text: string(c.Input)})
			}
		}
	case "user":
		for _, c := range m.Message.Content {
			if c.Type == "tool_result" {
				kind := domain.LogToolResult
				text := toolResultText(c.Content)
				if c.IsError {
					text = "error: " + text
				}
				log(domain.LogEntry{Kind: kind, CallID: c.ToolUseID, Text: text})
			}
		}
	case "result":
		res.InputTokens += m.Usage.InputTokens + m.Usage.CacheCreationInputTokens + m.Usage.CacheReadInputTokens
		res.OutputTokens += m.Usage.OutputTokens
		if m.IsError {
			log(domain.LogEntry{Kind: domain.LogError, Text: resultError(m)})
		}
	}
	return m.Type
}

// retryNote words Claude Code's notice that a model request failed and
// will be tried again, so a run that waits out a failing provider (or a
// relay refusing it) says why instead of going quiet. Decoded on its own:
// its fields mean other things, or nothing, on other lines.
func retryNote(line []byte) (string, bool) {
	var r struct {
		Attempt      int       `json:"attempt"`
		MaxRetries   int       `json:"max_retries"`
		RetryDelayMs int64     `json:"retry_delay_ms"`
		ErrorStatus  *int      `json:"error_status"`
		Error        string    `json:"error"`
		NoResponse   *struct{} `json:"no_response"`
	}
	if json.Unmarshal(line, &r) != nil {
		return "", false
	}
	why := strings.TrimSpace(r.Error)
	switch {
	case r.NoResponse != nil:
		why = "no answer began in time"
	case r.ErrorStatus != nil && why != "":
		why = fmt.Sprintf("HTTP %d: %s", *r.ErrorStatus, why)
	case r.ErrorStatus != nil:
		why = fmt.Sprintf("HTTP %d", *r.ErrorStatus)
	case why == "":
		why = "no reason given"
	}
	next := fmt.Sprintf("attempt %d", r.Attempt)
	if r.MaxRetries > 0 {
		next += fmt.Sprintf(" of %d", r.MaxRetries)
	}
	delay := (time.Duration(r.RetryDelayMs) * time.Millisecond).Round(100 * time.Millisecond)
	return fmt.Sprintf("retry: a model request failed (%s); %s in %s", why, next, delay), true
}

// resultError is what a failed result tells a person: its message (a
// failed API call comes as a "success" with is_error and its message in
// result), else its errors, else what its subtype means. The subtype
// names no more than the message does.
func resultError(m streamMsg) string {
	if r := strings.TrimSpace(m.Result); r != "" {
		return r
	}
	var errs []string
	for _, e := range m.Errors {
		if e = strings.TrimSpace(e); e != "" {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return strings.Join(errs, "; ")
	}
	switch m.Subtype {
	case "error_max_turns":
		return "the agent stopped at its turn limit without finishing"
	case "error_max_budget_usd":
		return "the agent stopped at its spending limit without finishing"
	case "error_max_structured_output_retries":
		return "the agent could not produce the structured output it was asked for"
	case "error_during_execution":
		return "the agent failed during its run and said nothing of why"
	}
	return "the agent ended with an error (" + cmp.Or(m.Subtype, "no subtype") + ")"
}

// toolResultText flattens a tool_result's content, a string or blocks.
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, b.Text)
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// builtinSessionFile remembers the chat directory's last built-in session.
const builtinSessionFile = ".helix-chat-builtin-session"

// errNoChatAgent says how to get a chat when there is neither Claude Code
// nor a configured built-in agent.
func errNoChatAgent(worker string, why error) error {
	return fmt.Errorf("`claude` (Claude Code) is not on PATH, and the built-in agent is not configured (%v).\n"+
		"  Configure the built-in agent, e.g.:\n"+
		"    helix-org config set agent.provider anthropic\n"+
		"    helix-org config set agent.model claude-sonnet-4-5\n"+
		"    printf %%s \"$ANTHROPIC_API_KEY\" | helix-org config set agent.api_key -\n"+
		"  or, for a local OpenAI-compatible server such as Ollama: agent.provider openai, agent.model <model>,\n"+
		"    agent.base_url http://127.0.0.1:11434/v1 (no key needed);\n"+
		"  or install Claude Code (npm install -g @anthropic-ai/claude-code), then run `helix-org chat` again,\n"+
		"  or connect any MCP client yourself: `helix-org token create %s` prints the URL, a token and an mcp.json snippet", why, worker)
}

// runBuiltinChat is `helix-org chat` without Claude Code: a terminal chat
// as the worker through the built-in agent's loop. The conversation is
// saved in the worker's chat directory after every turn, so the next chat
// (or --resume <id>) continues it and --new starts afresh.
func runBuiltinChat(cmd *cobra.Command, cfg chatConfig) error {
	ctx := cmd.Context()
	st, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	llmCfg := builtinConfig(ctx, st)
	if err := llmCfg.Check(); err != nil {
		return errNoChatAgent(cfg.Worker, err)
	}
	provider, err := llm.New(llm.Config{Provider: llmCfg.Provider, Model: llmCfg.Model, BaseURL: llmCfg.BaseURL, APIKey: llmCfg.APIKey})
	if err != nil {
		return fmt.Errorf("built-in agent: %w", err)
	}
	w, dir, err := chatDir(ctx, st, cfg)
	if err != nil {
		return err
	}
	id, history, err := builtinSession(dir, cfg)
	if err != nil {
		return err
	}
	bashOn, err := chatBash(ctx, st, w)
	if err != nil {
		return err
	}
	system, err := chatSystemPrompt(ctx, st, w, bashOn)
	if err != nil {
		return err
	}
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator, TTL: 24 * time.Hour, Label: "chat"})
	if err != nil {
		return err
	}
	defer st.RevokeToken(context.WithoutCancel(ctx), tok)
	var bash *agent.Bash
	if bashOn {
		bash = &agent.Bash{Dir: dir, Env: os.Environ()}
	}
	url := domain.MCPURL(orgURL(ctx, cfg.URL), w.ID)
	tools, err := agent.ConnectTools(ctx, url, tok, bash)
	if err != nil {
		return fmt.Errorf("%w\n  is `helix-org serve` running at %s? (set --url or HELIX_ORG_URL)", err, cfg.URL)
	}
	defer tools.Close()
	out := cmd.OutOrStdout()
	show := toolDisplay{out: out, verbose: cfg.Verbose}
	loop := &agent.Loop{Provider: provider, Tools: tools, System: system, MaxTurns: llmCfg.MaxTurns, MaxTokens: llmCfg.MaxTokens,
		OnMessage: func(m llm.Message, _ llm.Usage) { printChatMessage(out, m) }, OnToolCall: show.call, OnToolResult: show.result}
	fmt.Fprintf(out, "Chatting as %s (%s) through the built-in agent (%s %s), session %s", w.Name, w.ID, llmCfg.Provider, llmCfg.Model, id)
	if len(history) > 0 {
		fmt.Fprintf(out, ", resumed with %d earlier messages", len(history))
	}
	fmt.Fprintln(out, ". Type /help for commands, /exit or Ctrl-D to leave.")
	err = chatTurns(ctx, cmd.InOrStdin(), out, loop, history, func(msgs []llm.Message) error {
		return saveHistory(dir, id, msgs)
	})
	fmt.Fprintf(out, "Session %s: %d input and %d output tokens this time. Continue it with `helix-org chat --resume %s`.\n",
		id, loop.Usage.InputTokens, loop.Usage.OutputTokens, id)
	return err
}

// chatTurns reads lines until EOF or /exit; each runs the loop to its end
// and the conversation is saved. A "/name args" line is the worker's MCP
// prompt of that name, expanded on the server: the model gets the
// template, the terminal keeps the line as typed. A failed turn is
// reported and the chat goes on: the next line continues the same
// conversation.
func chatTurns(ctx context.Context, in io.Reader, out io.Writer, loop *agent.Loop, msgs []llm.Message, save func([]llm.Message) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		fmt.Fprint(out, "> ")
		if !sc.Scan() {
			fmt.Fprintln(out)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "/exit" || line == "/quit" {
			return nil
		}
		if line == "" {
			continue
		}
		text, ask := expandSlash(ctx, out, loop.Tools, line)
		if !ask {
			continue
		}
		var err error
		msgs, err = loop.Run(ctx, appendUserText(msgs, text))
		if serr := save(msgs); serr != nil {
			return serr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
		}
	}
}

// appendUserText adds the user's line. After an unfinished turn the
// conversation already ends with the user (tool results, or a line the
// model never answered); the line joins that message, since providers
// want the roles to alternate.
func appendUserText(msgs []llm.Message, text string) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		last := msgs[n-1]
		if last.Text != "" {
			text = last.Text + "\n\n" + text
		}
		last.Text = text
		return append(msgs[:n-1:n-1], last)
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Text: text})
}

// printChatMessage prints what the model says; its tool calls and their
// results are shown as they run (toolDisplay).
func printChatMessage(out io.Writer, m llm.Message) {
	if m.Role == llm.RoleAssistant && m.Text != "" {
		fmt.Fprintln(out, m.Text)
	}
}

// chatBash says whether agent.bash gives the worker a shell in its chat,
// as it would in its activations. The chat is the operator's own process:
// the provider key is used in it directly, never put in its environment.
func chatBash(ctx context.Context, st *store.Store, w domain.Worker) (bool, error) {
	scope, err := bashScope(ctx, st)
	if err != nil {
		return false, err
	}
	role, err := roleOf(ctx, st, w.ID)
	if err != nil {
		return false, err
	}
	return scope.Allows(w.ID, role.ID), nil
}

func chatSystemPrompt(ctx context.Context, st *store.Store, w domain.Worker, bash bool) (string, error) {
	pos, err := st.GetPosition(ctx, w.PositionID)
	if err != nil {
		return "", err
	}
	role, err := st.GetRole(ctx, pos.RoleID)
	if err != nil {
		return "", err
	}
	intro := fmt.Sprintf("You are chatting in a terminal with the person operating %s (%s) in a helix-org organisation. "+
		"Do what they ask through your tools and answer plainly.", w.Name, w.ID)
	return intro + "\n\n" + agent.SystemPrompt(bash, agent.EnvFile{Name: "role.md", Content: role.Content},
		agent.EnvFile{Name: "identity.md", Content: fmt.Sprintf("# %s\n\nWorker id: %s\nPosition: %s\n\n%s", w.Name, w.ID, pos.Title, w.Identity)}), nil
}

// builtinSession picks the session and loads its history: the one asked
// for, the directory's last one, or a fresh one.
func builtinSession(dir string, cfg chatConfig) (string, []llm.Message, error) {
	id := cfg.Resume
	if id == "" && !cfg.New {
		if last, err := os.ReadFile(filepath.Join(dir, builtinSessionFile)); err == nil {
			id = strings.TrimSpace(string(last))
		}
	}
	if id == "" {
		id = newUUID()
		return id, nil, os.WriteFile(filepath.Join(dir, builtinSessionFile), []byte(id), 0o600)
	}
	if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", nil, fmt.Errorf("session id %q is not valid", id)
	}
	data, err := os.ReadFile(historyPath(dir, id))
	if errors.Is(err, os.ErrNotExist) {
		if cfg.Resume != "" {
			return "", nil, fmt.Errorf("no built-in chat session %s in %s", id, dir)
		}
		return id, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var h struct {
		Messages []llm.Message `json:"messages"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return "", nil, fmt.Errorf("read chat history %s: %w", historyPath(dir, id), err)
	}
	return id, h.Messages, os.WriteFile(filepath.Join(dir, builtinSessionFile), []byte(id), 0o600)
}

func historyPath(dir, id string) string { return filepath.Join(dir, "builtin-"+id+".json") }

// saveHistory writes the conversation atomically, so a crash mid-write
// never loses the earlier turns.
func saveHistory(dir, id string, msgs []llm.Message) error {
	data, err := json.MarshalIndent(map[string]any{"messages": msgs}, "", "  ")
	if err != nil {
		return err
	}
	tmp := historyPath(dir, id) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	return os.Rename(tmp, historyPath(dir, id))
}

package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
)

// RunBuiltin is one activation of the built-in agent, what `helix-org
// agent run` does in a worker's environment directory: it reads role.md,
// identity.md and agent.md (the model sees them in its system prompt, as
// it cannot read files) and mcp.json, connects to the worker's MCP
// endpoint, runs the loop on prompt, and writes the run to out as
// stream-json, ending with a result line — an error one when the run fails,
// so the failure is on the activation log too.
func RunBuiltin(ctx context.Context, dir, prompt string, cfg LLMConfig, out io.Writer) error {
	s := newStreamJSON(out)
	loop, err := prepareBuiltin(ctx, dir, cfg, s)
	if err != nil {
		s.result(nil, "", err)
		return err
	}
	defer loop.Tools.Close()
	// A preserved session continues the conversation kept from its last
	// run, and keeps this one's for the next, on error too.
	var path string
	var msgs []llm.Message
	if name := os.Getenv(EnvHistory); name != "" {
		path = filepath.Join(dir, filepath.Base(name))
		if msgs, err = readHistory(path); err != nil {
			s.result(nil, "", err)
			return err
		}
	}
	msgs, err = loop.Run(ctx, continueWith(msgs, prompt))
	if path != "" {
		if werr := writeHistory(path, msgs); werr != nil {
			err = errors.Join(err, fmt.Errorf("keep the conversation: %w", werr))
		}
	}
	s.result(loop, FinalText(msgs), err)
	return err
}

func prepareBuiltin(ctx context.Context, dir string, cfg LLMConfig, s *streamJSON) (*Loop, error) {
	provider, err := builtinModel(dir, cfg)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "mcp.json"))
	if err != nil {
		return nil, fmt.Errorf("no mcp.json in %s: run `helix-org agent run` in a worker's environment directory: %w", dir, err)
	}
	url, token, err := domain.ReadMCPConfig(data, os.Getenv)
	if err != nil || url == "" {
		return nil, fmt.Errorf("mcp.json in %s names no helix-org server (%v)", dir, err)
	}
	if token == "" {
		return nil, fmt.Errorf("no token for the helix-org server: mcp.json refers to $%s, which is not set", domain.TokenEnv)
	}
	role := readOptional(dir, "role.md")
	// Only the server's config turns bash on: role.md is text anyone with
	// update_role can write, so its front matter is never read for it.
	var bash *Bash
	if cfg.Bash {
		bash = &Bash{Dir: dir, Env: withoutLLMKey(os.Environ())}
	}
	tools, err := ConnectTools(ctx, url, token, bash)
	if err != nil {
		return nil, err
	}
	s.init(cfg.Model, tools.Names())
	system := SystemPrompt(bash != nil, EnvFile{"agent.md", readOptional(dir, "agent.md")},
		EnvFile{"role.md", role}, EnvFile{"identity.md", readOptional(dir, "identity.md")})
	return &Loop{Provider: provider, Tools: tools, System: system, MaxTurns: cfg.MaxTurns, MaxTokens: cfg.MaxTokens, OnMessage: s.message,
		Steer: tools.Steering}, nil
}

// builtinModel is the model a run talks to: the provider configured, or
// on the example runtime the role's rule (exampleModel).
func builtinModel(dir string, cfg LLMConfig) (llm.Provider, error) {
	if cfg.Provider == ExampleProvider {
		return exampleModel{role: readOptional(dir, "role.md"), self: os.Getenv("HELIX_ORG_WORKER")}, nil
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	provider, err := llm.New(llm.Config{Provider: cfg.Provider, Model: cfg.Model, BaseURL: cfg.BaseURL, APIKey: cfg.APIKey})
	if err != nil {
		return nil, fmt.Errorf("built-in agent: %w", err)
	}
	return provider, nil
}

// EnvFile is one file of a worker's environment, shown to the model.
type EnvFile struct {
	Name, Content string
}

// SystemPrompt frames the environment files for the model.
func SystemPrompt(bash bool, files ...EnvFile) string {
	var b strings.Builder
	b.WriteString("You are the built-in helix-org agent, acting as one AI worker of a helix-org organisation. ")
	b.WriteString("The files of your working directory are reproduced below, so you need not read them")
	if bash {
		b.WriteString(" (your bash tool runs commands in that directory)")
	}
	b.WriteString(". Act only through your tools. When you are done, answer with a short summary and no tool call.\n")
	for _, f := range files {
		fmt.Fprintf(&b, "\n<file name=%q>\n%s\n</file>\n", f.Name, strings.TrimRight(f.Content, "\n"))
	}
	return b.String()
}

func readOptional(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "(" + name + " is missing)"
	}
	return string(b)
}

// withoutLLMKey drops HELIX_ORG_LLM_API_KEY from an environment (under the
// server it is the run's token, which bash already has as HELIX_ORG_TOKEN;
// run by hand it may be a provider key).
func withoutLLMKey(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, EnvLLMAPIKey+"=") {
			out = append(out, kv)
		}
	}
	return out
}

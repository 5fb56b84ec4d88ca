package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/store"
)

// agentRunConfig is `agent run`'s configuration: flags whose defaults come
// from the HELIX_ORG_LLM_* variables the builtin runtime sets. The API key
// is read only from the environment, so it never shows in a process list;
// under the server it is the run's token, and the base URL the relay.
type agentRunConfig struct {
	Dir string
	// From is a directory holding the whole run, as the kubernetes
	// runtime mounts its Secret: the prompt, the environment files, and
	// one file per variable.
	From string
	LLM  agent.LLMConfig
}

func newAgentCmd() *cobra.Command {
	return group("agent", "The built-in agent that runs activations with any LLM provider", newAgentRunCmd())
}

func newAgentRunCmd() *cobra.Command {
	cfg := agentRunConfig{LLM: agent.LLMConfigFromEnv(os.Getenv)}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one activation: prompt on stdin, in a worker's environment directory; prints stream-json",
		Long: `agent run is what the builtin runtime starts for each activation, in the
worker's environment directory (role.md, identity.md, agent.md, mcp.json),
with the prompt on stdin. It talks to the configured LLM provider, runs the
model's tool calls against the worker's MCP endpoint, and prints the run as
Claude Code stream-json. The server passes the agent.* settings as
HELIX_ORG_LLM_* variables, with the base URL set to its model relay and the
key to the run's own token (the provider key never leaves the server); the
key comes only from HELIX_ORG_LLM_API_KEY, the MCP token only from
HELIX_ORG_TOKEN.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := cmd.InOrStdin()
			if cfg.From != "" {
				f, err := loadRunDir(cfg.From)
				if err != nil {
					return err
				}
				defer f.Close()
				in, cfg.Dir, cfg.LLM = f, cfg.From, agent.LLMConfigFromEnv(os.Getenv)
			}
			// The key stays out of every process this one starts.
			os.Unsetenv(agent.EnvLLMAPIKey)
			prompt, err := io.ReadAll(in)
			if err != nil {
				return fmt.Errorf("read prompt: %w", err)
			}
			return agent.RunBuiltin(cmd.Context(), cfg.Dir, string(prompt), cfg.LLM, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Dir, "dir", ".", "the worker's environment directory")
	f.StringVar(&cfg.From, "from", "", "a directory holding the run (the kubernetes runtime's Secret): the prompt in prompt, the environment files, "+
		"a file per variable; it replaces --dir, stdin and the HELIX_ORG_LLM_* flags")
	f.StringVar(&cfg.LLM.Provider, "provider", cfg.LLM.Provider, "wire format: anthropic or openai (env "+agent.EnvLLMProvider+")")
	f.StringVar(&cfg.LLM.Model, "model", cfg.LLM.Model, "model name (env "+agent.EnvLLMModel+")")
	f.StringVar(&cfg.LLM.BaseURL, "base-url", cfg.LLM.BaseURL, "provider base URL (env "+agent.EnvLLMBaseURL+")")
	f.IntVar(&cfg.LLM.MaxTurns, "max-turns", cfg.LLM.MaxTurns, "most model turns (env "+agent.EnvLLMMaxTurns+")")
	f.IntVar(&cfg.LLM.MaxTokens, "max-tokens", cfg.LLM.MaxTokens, "most output tokens per reply (env "+agent.EnvLLMMaxTokens+")")
	f.BoolVar(&cfg.LLM.Bash, "bash", cfg.LLM.Bash, "offer the model a bash tool (env "+agent.EnvLLMBash+")")
	return cmd
}

// loadRunDir sets the variables the run directory holds (its files named
// like variables) and opens its prompt.
func loadRunDir(dir string) (*os.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	for _, e := range entries {
		if !kubernetes.IsEnvKey(e.Name()) {
			continue
		}
		v, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		os.Setenv(e.Name(), string(v))
	}
	f, err := os.Open(filepath.Join(dir, kubernetes.PromptFile))
	if err != nil {
		return nil, fmt.Errorf("--from: the run has no prompt: %w", err)
	}
	return f, nil
}

// builtinConfig reads the built-in agent's provider settings, on every use
// so a `config set` applies to the next activation. It holds the provider
// key: only the relay and an operator's own chat use it as it is. Bash is
// off here; it is decided per worker (bashScope).
func builtinConfig(ctx context.Context, st *store.Store) agent.LLMConfig {
	return agent.LLMFromSettings(ctx, st)
}

// bashScope reads agent.bash.
func bashScope(ctx context.Context, st *store.Store) (agent.BashScope, error) {
	v, err := st.SettingOr(ctx, agent.BashSetting)
	if err != nil {
		return agent.BashScope{}, err
	}
	return agent.ParseBashScope(v)
}

// relayUpstream is the model relay's provider: agent.provider, base_url
// and api_key, and llm.prices and llm.prices.default, read on every
// relayed call.
func relayUpstream(st *store.Store) func(context.Context) (relay.Upstream, error) {
	return func(ctx context.Context) (relay.Upstream, error) {
		c := builtinConfig(ctx, st)
		return relayPrices(ctx, st, relay.Upstream{Provider: c.Provider, BaseURL: c.BaseURL, APIKey: c.APIKey})
	}
}

// providerEmbedder embeds for memory.embeddings=provider through the
// relay's provider (agent.provider, base_url and api_key, read on every
// recall) and the relay's client: the key stays in the server, as for
// relayed calls. Only an OpenAI-compatible provider has /embeddings.
func providerEmbedder(st *store.Store) store.ProviderEmbedder {
	client := relay.NewClient()
	return func(ctx context.Context, model string) (domain.Embedder, error) {
		c := builtinConfig(ctx, st)
		if c.Provider != llm.OpenAI {
			return nil, fmt.Errorf("memory.embeddings is provider but agent.provider is %q; embeddings need %q (any OpenAI-compatible server)", c.Provider, llm.OpenAI)
		}
		if c.APIKey == "" && c.BaseURL == "" {
			return nil, fmt.Errorf("memory.embeddings is provider but neither agent.api_key nor agent.base_url is set")
		}
		return llm.Embeddings{BaseURL: c.BaseURL, APIKey: c.APIKey, Name: model, Client: client}, nil
	}
}

// relayGemini is the relay's Gemini API upstream: agent.gemini.base_url
// and api_key, priced like the other by llm.prices.
func relayGemini(st *store.Store) func(context.Context) (relay.Upstream, error) {
	return func(ctx context.Context) (relay.Upstream, error) {
		up := relay.Upstream{Provider: domain.RelayGemini}
		var err error
		if up.BaseURL, err = st.SettingOr(ctx, agent.GeminiBaseURLSetting); err != nil {
			return relay.Upstream{}, err
		}
		if up.APIKey, err = st.SettingOr(ctx, agent.GeminiAPIKeySetting); err != nil {
			return relay.Upstream{}, err
		}
		return relayPrices(ctx, st, up)
	}
}

// relayPrices adds llm.prices and llm.prices.default to up.
func relayPrices(ctx context.Context, st *store.Store, up relay.Upstream) (relay.Upstream, error) {
	raw, err := st.SettingOr(ctx, domain.PricesSetting)
	if err != nil {
		return relay.Upstream{}, err
	}
	if up.Prices, err = domain.ParsePrices(raw); err != nil {
		return relay.Upstream{}, err
	}
	if raw, err = st.SettingOr(ctx, domain.DefaultPriceSetting); err != nil {
		return relay.Upstream{}, err
	}
	if up.DefaultPrice, err = domain.ParsePrice(raw); err != nil {
		return relay.Upstream{}, err
	}
	return up, nil
}

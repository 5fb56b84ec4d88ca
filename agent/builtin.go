package agent

import (
	"cmp"
	"context"
	"errors"
	"os/exec"
	"strconv"

	"github.com/helixml/helix-org/domain"
)

// Builtin runs the built-in agent: this same binary's `agent run`, as a
// process in the worker's environment directory, prompt on stdin. The
// child calls its model through the server's relay with the run's token
// and acts through the worker's MCP endpoint; it prints Claude-Code-style
// stream-json, so its messages, tool calls and token usage reach the
// activation log the same way Claude's do.
type Builtin struct {
	// Exe is the helix-org executable (os.Executable()).
	Exe string
	// LLM is the model and limits; its BaseURL and APIKey are not used:
	// the child gets the relay and the run's token instead (ForRun).
	LLM LLMConfig
	// Sandbox, when set, is where the child runs; nil runs it on the host
	// as the server's user.
	Sandbox *Bwrap
}

var _ domain.Runtime = (*Builtin)(nil)

// LLMConfig is the built-in agent's provider configuration: the agent.*
// settings, passed to the child as HELIX_ORG_LLM_* variables.
type LLMConfig struct {
	Provider  string
	Model     string
	BaseURL   string
	APIKey    string
	MaxTurns  int
	MaxTokens int
	// Bash offers the model a bash tool in the environment directory. The
	// server sets it from agent.bash for the run's worker and role; nothing
	// an agent can write turns it on.
	Bash bool
}

// ForRun points c at the server's model relay for run, with the run's
// token as the key: what an activation's agent gets instead of the
// provider's URL and key.
func (c LLMConfig) ForRun(run domain.Run) LLMConfig {
	if c.Provider == "" {
		c.Provider = domain.RelayAnthropic
	}
	c.BaseURL, c.APIKey = domain.RelayURL(run.BaseURL, c.Provider), run.Token
	return c
}

// The variables that carry an LLMConfig to `helix-org agent run`.
const (
	EnvLLMProvider  = "HELIX_ORG_LLM_PROVIDER"
	EnvLLMModel     = "HELIX_ORG_LLM_MODEL"
	EnvLLMBaseURL   = "HELIX_ORG_LLM_BASE_URL"
	EnvLLMAPIKey    = "HELIX_ORG_LLM_API_KEY"
	EnvLLMMaxTurns  = "HELIX_ORG_LLM_MAX_TURNS"
	EnvLLMMaxTokens = "HELIX_ORG_LLM_MAX_TOKENS"
	EnvLLMBash      = "HELIX_ORG_LLM_BASH"
)

// Environ renders c as the child's HELIX_ORG_LLM_* variables.
func (c LLMConfig) Environ() []string {
	return []string{
		EnvLLMProvider + "=" + c.Provider,
		EnvLLMModel + "=" + c.Model,
		EnvLLMBaseURL + "=" + c.BaseURL,
		EnvLLMAPIKey + "=" + c.APIKey,
		EnvLLMMaxTurns + "=" + strconv.Itoa(c.MaxTurns),
		EnvLLMMaxTokens + "=" + strconv.Itoa(c.MaxTokens),
		EnvLLMBash + "=" + strconv.FormatBool(c.Bash),
	}
}

// LLMConfigFromEnv reads what Environ wrote; unset numbers take the
// settings' defaults.
func LLMConfigFromEnv(getenv func(string) string) LLMConfig {
	num := func(key string, spec domain.SettingSpec) int {
		if n, err := strconv.Atoi(getenv(key)); err == nil && n > 0 {
			return n
		}
		n, _ := strconv.Atoi(spec.Default)
		return n
	}
	bash, _ := strconv.ParseBool(getenv(EnvLLMBash))
	return LLMConfig{Provider: getenv(EnvLLMProvider), Model: getenv(EnvLLMModel), BaseURL: getenv(EnvLLMBaseURL),
		APIKey: getenv(EnvLLMAPIKey), MaxTurns: num(EnvLLMMaxTurns, MaxTurnsSetting), MaxTokens: num(EnvLLMMaxTokens, MaxTokensSetting), Bash: bash}
}

// Check names the setting to fix when the provider cannot be used.
func (c LLMConfig) Check() error {
	if c.Model == "" {
		return errors.New("the built-in agent has no model: set one with `helix-org config set agent.model <model>` " +
			"(e.g. claude-sonnet-4-5 for anthropic, or a local model name such as qwen3 with agent.provider openai)")
	}
	if c.APIKey == "" && c.BaseURL == "" {
		return errors.New("the built-in agent has no API key: set one with `printf %s \"$KEY\" | helix-org config set agent.api_key -`, " +
			"or point agent.base_url at a keyless local server (e.g. http://127.0.0.1:11434/v1 for Ollama, with agent.provider openai)")
	}
	return nil
}

// Configured reports whether c is enough to run: a model and a key or a
// base URL.
func (c LLMConfig) Configured() bool { return c.Check() == nil }

// Run carries out one activation.
func (b *Builtin) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	if b.Exe == "" {
		return domain.RunResult{ExitStatus: -1}, errors.New("builtin runtime: the helix-org executable is unknown")
	}
	cmd := exec.Command(b.Exe, "agent", "run")
	cmd.Dir = run.EnvDir
	cmd.Env = append(Environ(run), b.LLM.ForRun(run).Environ()...)
	// Kept or not, no conversation is left in the directory for a run
	// that was not given it.
	if err := handHistory(run); err != nil {
		return domain.RunResult{ExitStatus: -1}, err
	}
	session := ""
	if run.KeepHistory {
		session = cmp.Or(run.Session, newBuiltinSession())
		cmd.Env = append(cmd.Env, EnvHistory+"="+historyFile)
	}
	var usage domain.RunResult
	res, err := runAgent(ctx, cmd, run, b.Sandbox, []string{b.Exe}, func(stream, line string) {
		if stream == "stderr" {
			run.Log(domain.LogEntry{Kind: domain.LogOutput, Text: "stderr: " + trimCR(line)})
			return
		}
		parseStreamJSON(line, run.Log, &usage)
	})
	res.InputTokens, res.OutputTokens = usage.InputTokens, usage.OutputTokens
	history, herr := takeHistory(run)
	if run.KeepHistory && herr == nil {
		res.Session, res.History = session, history
	}
	return res, errors.Join(err, herr)
}

package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Operational config keys read by the agent runtimes.
var (
	// RuntimeSetting is agent.runtime, derived from the Runtimes table.
	RuntimeSetting = runtimeSetting(Runtimes)
	CommandSetting = domain.SettingSpec{Key: "agent.command", Type: domain.SettingString, RunsCode: true,
		Description: "Command line the command runtime runs in the worker's environment directory, prompt on stdin."}
	ModelSetting = domain.SettingSpec{Key: "agent.model", Type: domain.SettingString,
		Description: "Model name for claude or the built-in agent."}
	EffortSetting = domain.SettingSpec{Key: "agent.effort", Type: domain.SettingString,
		Description: "Reasoning effort passed to Claude Code, when set."}
	ProviderSetting = domain.SettingSpec{Key: "agent.provider", Type: domain.SettingString, Default: "anthropic",
		Enum: []string{"anthropic", "openai"}, Description: "LLM wire format of the built-in agent."}
	BaseURLSetting = domain.SettingSpec{Key: "agent.base_url", Type: domain.SettingString,
		Description: "Provider base URL for the built-in agent (any OpenAI-compatible server)."}
	APIKeySetting = domain.SettingSpec{Key: "agent.api_key", Type: domain.SettingString, Secret: true,
		Description: "Provider API key for the built-in agent."}
	GeminiBaseURLSetting = domain.SettingSpec{Key: "agent.gemini.base_url", Type: domain.SettingString,
		Description: "Gemini API base URL the model relay sends Gemini CLI's calls to; empty is Google's (https://generativelanguage.googleapis.com)."}
	GeminiAPIKeySetting = domain.SettingSpec{Key: "agent.gemini.api_key", Type: domain.SettingString, Secret: true,
		Description: "Gemini API key the model relay calls with for the gemini runtime; the agent gets only its run's token."}
	MaxTurnsSetting = domain.SettingSpec{Key: "agent.max_turns", Type: domain.SettingInt, Default: "30",
		Description: "Most model turns in one built-in activation."}
	MaxTokensSetting = domain.SettingSpec{Key: "agent.max_tokens", Type: domain.SettingInt, Default: "4096",
		Description: "Most output tokens per model reply."}
	BashSetting = domain.SettingSpec{Key: "agent.bash", Type: domain.SettingJSON, Default: "{}", RunsCode: true,
		Description: `Where the built-in agent gets a bash tool in the worker's directory: {"roles":["r-dev"],"workers":["w-x"]}, or {"all":true}. ` +
			"On a host runtime that is a shell in the agent's sandbox (as the server's user with agent.sandbox off). Role text cannot turn it on."}
	ByRoleSetting = domain.SettingSpec{Key: byRoleKey, Type: domain.SettingJSON, Default: "{}", Validate: func(v string) error { _, err := ParseByRole(v); return err },
		Description: `The built-in agent's model and turn limit for the holders of a role, over agent.model and agent.max_turns: {"r-explorer":{"model":"claude-haiku-4-5","max_turns":20}} ` +
			"gives a spec task's explorers a cheap model and a bounded tool budget."}
	SandboxSetting = domain.SettingSpec{Key: "agent.sandbox", Type: domain.SettingString, Default: SandboxBwrap, Enum: []string{SandboxBwrap, SandboxOff},
		Description: "How the host runtimes (claude, codex, gemini, opencode, command, builtin) confine an agent: bwrap runs it in a bubblewrap sandbox that sees only its worker's directory, " +
			"the system read-only and its own processes, and refuses to run when bubblewrap cannot; off runs it as the server's user, " +
			"able to read the database, its key and other runs' tokens (warned on every run)."}
	SandboxPathsSetting = domain.SettingSpec{Key: "agent.sandbox.paths", Type: domain.SettingJSON, Default: "{}", Validate: validSandboxPaths,
		Description: `Host paths every sandboxed agent also sees, at the same path: {"ro":["/opt/node"],"rw":["/srv/shared"]}. Absolute, never /.`}
)

// agent.sandbox's values.
const (
	SandboxBwrap = "bwrap"
	SandboxOff   = "off"
)

// SandboxPaths is the value of agent.sandbox.paths.
type SandboxPaths struct {
	ReadOnly []string `json:"ro,omitempty"`
	Writable []string `json:"rw,omitempty"`
}

// ParseSandboxPaths decodes agent.sandbox.paths, refusing unknown keys
// and paths that are relative or the whole filesystem. Its errors do not
// name the setting; callers do.
func ParseSandboxPaths(s string) (SandboxPaths, error) {
	var p SandboxPaths
	if s == "" {
		return p, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return SandboxPaths{}, fmt.Errorf(`want {"ro":["/path",…],"rw":["/path",…]}: %w`, err)
	}
	for _, path := range slices.Concat(p.ReadOnly, p.Writable) {
		if !filepath.IsAbs(path) || filepath.Clean(path) == "/" {
			return SandboxPaths{}, fmt.Errorf("%q is not an absolute path below / (each entry is one file or directory to share)", path)
		}
	}
	return p, nil
}

func validSandboxPaths(s string) error { _, err := ParseSandboxPaths(s); return err }

// BashScope is the value of agent.bash: the roles and workers whose
// built-in agent is offered a bash tool.
type BashScope struct {
	All     bool     `json:"all,omitempty"`
	Roles   []string `json:"roles,omitempty"`
	Workers []string `json:"workers,omitempty"`
}

// ParseBashScope decodes agent.bash, refusing unknown keys so a typo is
// not silently a shell for no one. The setting was once a bool; a stored
// "true" still means every worker (an operator chose it) and "false" none.
func ParseBashScope(s string) (BashScope, error) {
	switch s {
	case "", "false":
		return BashScope{}, nil
	case "true":
		return BashScope{All: true}, nil
	}
	var b BashScope
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return BashScope{}, fmt.Errorf(`%s: want {"roles":[…],"workers":[…]} or {"all":true}: %w`, BashSetting.Key, err)
	}
	return b, nil
}

// Allows reports whether a worker, holding role, gets bash.
func (b BashScope) Allows(worker, role string) bool {
	return b.All || slices.Contains(b.Workers, worker) || slices.Contains(b.Roles, role)
}

// Any reports whether bash is on for anyone.
func (b BashScope) Any() bool { return b.All || len(b.Roles) > 0 || len(b.Workers) > 0 }

// Settings lists every agent config key.
var Settings = domain.Settings{RuntimeSetting, CommandSetting, ModelSetting, EffortSetting, ProviderSetting,
	BaseURLSetting, APIKeySetting, GeminiBaseURLSetting, GeminiAPIKeySetting, MaxTurnsSetting, MaxTokensSetting, BashSetting, ByRoleSetting, SandboxSetting, SandboxPathsSetting,
	PreserveContextSetting, SessionMaxAgeSetting, SessionMaxBytesSetting}

const byRoleKey = "agent.by_role"

// RoleLimits are agent.by_role's overrides for one role.
type RoleLimits struct {
	Model    string `json:"model,omitempty"`
	MaxTurns int    `json:"max_turns,omitempty"`
}

// ParseByRole reads agent.by_role: role ids (r-…) to their overrides.
func ParseByRole(s string) (map[string]RoleLimits, error) {
	out := map[string]RoleLimits{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf(`%s: want {"r-…":{"model":"…","max_turns":N}}: %w`, byRoleKey, err)
	}
	for role, l := range out {
		switch {
		case !strings.HasPrefix(role, domain.PrefixRole):
			return nil, fmt.Errorf("%s: %q is not a role id (r-…)", byRoleKey, role)
		case l.MaxTurns < 0:
			return nil, fmt.Errorf("%s: %s: max_turns must be 0 (agent.max_turns) or more, got %d", byRoleKey, role, l.MaxTurns)
		}
	}
	return out, nil
}

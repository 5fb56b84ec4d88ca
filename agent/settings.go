package agent

import "github.com/helixml/helix-org/domain"

// Runtime names.
const (
	RuntimeCommand = "command"
	RuntimeClaude  = "claude"
	RuntimeBuiltin = "builtin"
	RuntimeDocker  = "docker"
)

// Operational config keys read by the agent runtimes.
var (
	RuntimeSetting = domain.SettingSpec{Key: "agent.runtime", Type: domain.SettingString, Default: "",
		Enum:        []string{"", RuntimeCommand, RuntimeClaude, RuntimeBuiltin, RuntimeDocker},
		Description: "How activations run: command, claude, builtin or docker. Empty picks claude when it is on PATH, else command when agent.command is set, else builtin."}
	CommandSetting = domain.SettingSpec{Key: "agent.command", Type: domain.SettingString,
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
	MaxTurnsSetting = domain.SettingSpec{Key: "agent.max_turns", Type: domain.SettingInt, Default: "30",
		Description: "Most model turns in one built-in activation."}
	MaxTokensSetting = domain.SettingSpec{Key: "agent.max_tokens", Type: domain.SettingInt, Default: "4096",
		Description: "Most output tokens per model reply."}
	BashSetting = domain.SettingSpec{Key: "agent.bash", Type: domain.SettingBool, Default: "false",
		Description: "Give the built-in agent a bash tool in the worker's environment directory (a role can also enable it with front matter `bash: true`)."}
)

// Settings lists every agent config key.
var Settings = domain.Settings{RuntimeSetting, CommandSetting, ModelSetting, EffortSetting, ProviderSetting,
	BaseURLSetting, APIKeySetting, MaxTurnsSetting, MaxTokensSetting, BashSetting}

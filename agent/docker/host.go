package docker

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// Host is what the server lends the docker runtime: its engine, where
// containers reach the server, the files they must never mount, and the
// role a worker holds (for overrides by role).
type Host struct {
	Engine    *Engine
	MCPBase   func(ctx context.Context) (string, error)
	Forbidden []string
	RoleOf    func(ctx context.Context, worker string) (string, error)
}

// FromSettings builds the runtime from agent.docker.*, read on every
// activation; llm is the built-in agent's config for the run (no
// provider key).
func FromSettings(ctx context.Context, st agent.SettingReader, h Host, llm *agent.LLMConfig) (*Runtime, error) {
	get := func(spec domain.SettingSpec) string { v, _ := st.SettingOr(ctx, spec); return v }
	user := get(UserSetting)
	if user == "" {
		user = DefaultUser()
	}
	lim, err := ParseLimits(get(MemorySetting), get(CPUsSetting), st.IntSetting(ctx, PidsSetting), get(TmpSetting), user, get(OCIRuntimeSetting))
	if err != nil {
		return nil, fmt.Errorf("agent.docker settings: %w", err)
	}
	ov, err := ParseOverrides(get(OverridesSetting))
	if err != nil {
		return nil, err
	}
	env, err := ParseEnv(EnvSetting.Key, get(EnvSetting))
	if err != nil {
		return nil, err
	}
	return &Runtime{Engine: h.Engine, Image: get(ImageSetting), Command: get(CommandSetting), CLI: get(CLISetting), Overrides: ov, RoleOf: h.RoleOf,
		Binary: get(BinarySetting), LLM: llm, Model: get(agent.ModelSetting), Effort: get(agent.EffortSetting),
		Env: env, Limits: lim, MCPBase: h.MCPBase, Forbidden: h.Forbidden}, nil
}

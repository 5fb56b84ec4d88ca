package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// runtimeSelector picks the runtime named by agent.runtime for each
// activation, so `config set agent.runtime …` applies without a restart.
type runtimeSelector struct {
	st     *store.Store
	docker *dockerHost
}

var _ dispatch.Spawner = runtimeSelector{}

func (r runtimeSelector) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	rt, err := r.runtime(ctx)
	if err != nil {
		run.Log(domain.LogEntry{Kind: domain.LogError, Text: err.Error()})
		return domain.RunResult{ExitStatus: -1}, err
	}
	return rt.Run(ctx, run)
}

func (r runtimeSelector) runtime(ctx context.Context) (domain.Runtime, error) {
	get := func(s domain.SettingSpec) string { v, _ := r.st.SettingOr(ctx, s); return v }
	name := get(agent.RuntimeSetting)
	if name == "" {
		if _, err := exec.LookPath("claude"); err == nil {
			name = agent.RuntimeClaude
		} else if get(agent.CommandSetting) != "" {
			name = agent.RuntimeCommand
		} else {
			name = agent.RuntimeBuiltin
		}
	}
	switch name {
	case agent.RuntimeCommand:
		return &agent.Command{Line: get(agent.CommandSetting)}, nil
	case agent.RuntimeClaude:
		return &agent.Claude{Model: get(agent.ModelSetting), Effort: get(agent.EffortSetting)}, nil
	case agent.RuntimeDocker:
		return r.docker.runtime(ctx)
	case agent.RuntimeBuiltin:
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("builtin runtime: find the helix-org executable: %w", err)
		}
		return &agent.Builtin{Exe: exe, LLM: builtinConfig(ctx, r.st)}, nil
	}
	return nil, fmt.Errorf("agent.runtime %q is not available in this build (valid: %q, %q, %q, %q)", name, agent.RuntimeCommand, agent.RuntimeClaude, agent.RuntimeBuiltin, agent.RuntimeDocker)
}

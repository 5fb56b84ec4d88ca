package docker

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// Operational config keys of the docker runtime.
var (
	ImageSetting = domain.SettingSpec{Key: "agent.docker.image", Type: domain.SettingString, RunsCode: true,
		Description: "Image each activation runs in when agent.runtime is docker; agent.docker.overrides may pick another per role or worker."}
	OverridesSetting = domain.SettingSpec{Key: "agent.docker.overrides", Type: domain.SettingJSON, Default: "{}", RunsCode: true,
		Description: `Per-role and per-worker image, command, cli and extra networks: {"roles":{"r-dev":{"image":"dev:1","networks":["egress"]}},"workers":{"w-x":{"image":"x:2","cli":"claude"}}}; a worker's entry beats its role's.`}
	CommandSetting = domain.SettingSpec{Key: "agent.docker.command", Type: domain.SettingString, Default: "helix-org agent run", RunsCode: true,
		Description: "Entry point run in the container when agent.docker.cli is builtin, split on spaces (use a script for anything more); the prompt is on stdin."}
	CLISetting = domain.SettingSpec{Key: "agent.docker.cli", Type: domain.SettingString, Default: CLIBuiltin, Enum: cliNames, RunsCode: true,
		Description: "The agent a container runs: builtin runs agent.docker.command (the built-in agent by default); claude, codex, gemini or opencode " +
			"runs that CLI from the image's PATH as its host runtime does — its config file in the workspace, the relay and the run's token in its " +
			"environment, no provider key — free to use its own tools on the workspace, the container being its sandbox; agent.model applies."}
	BinarySetting = domain.SettingSpec{Key: "agent.docker.binary", Type: domain.SettingString, RunsCode: true,
		Description: "Host path of a static helix-org build (CGO_ENABLED=0) mounted read-only at /usr/local/bin/helix-org; empty if the image has one."}
	EnvSetting = domain.SettingSpec{Key: "agent.docker.env", Type: domain.SettingJSON, Default: "{}", Secret: true, RunsCode: true,
		Description: `Extra environment of every activation container, e.g. {"HTTPS_PROXY":"…"}; encrypted at rest. Agents reach models through the server's relay without it; a variable set here replaces the run's own of that name.`}
	MemorySetting = domain.SettingSpec{Key: "agent.docker.memory", Type: domain.SettingString, Default: "1g",
		Description: "Memory cap of an activation container (no swap), e.g. 512m."}
	CPUsSetting = domain.SettingSpec{Key: "agent.docker.cpus", Type: domain.SettingString, Default: "1",
		Description: "CPU cap of an activation container, in cores, e.g. 0.5."}
	PidsSetting = domain.SettingSpec{Key: "agent.docker.pids", Type: domain.SettingInt, Default: "256",
		Description: "Most processes and threads in an activation container."}
	TmpSetting = domain.SettingSpec{Key: "agent.docker.tmp_size", Type: domain.SettingString, Default: "64m",
		Description: "Size of the tmpfs at /tmp; the rest of the root file system is read-only."}
	UserSetting = domain.SettingSpec{Key: "agent.docker.user", Type: domain.SettingString, RunsCode: true,
		Description: "uid:gid containers run as; empty means 65534:65534 when the server runs as root, else the server's own ids. Never root."}
	OCIRuntimeSetting = domain.SettingSpec{Key: "agent.docker.oci_runtime", Type: domain.SettingString, RunsCode: true,
		Description: "Alternative OCI runtime for activation containers, e.g. runsc (gVisor); empty uses the daemon's default."}
)

// Settings lists every docker runtime config key.
var Settings = domain.Settings{ImageSetting, OverridesSetting, CommandSetting, CLISetting, BinarySetting, EnvSetting,
	MemorySetting, CPUsSetting, PidsSetting, TmpSetting, UserSetting, OCIRuntimeSetting}

// CLIBuiltin is agent.docker.cli's value that runs agent.docker.command.
const CLIBuiltin = "builtin"

// cliNames are agent.docker.cli's values.
var cliNames = append([]string{CLIBuiltin}, agent.ContainerCLIs...)

// Override replaces parts of the defaults for a role or a worker.
type Override struct {
	Image   string `json:"image,omitempty"`
	Command string `json:"command,omitempty"`
	// CLI is agent.docker.cli for the role or worker.
	CLI string `json:"cli,omitempty"`
	// Networks are extra Docker networks (created by the operator, e.g. one
	// with egress to an LLM provider) the container joins.
	Networks []string `json:"networks,omitempty"`
}

// builtin says the override runs its command rather than an agent CLI.
func (o Override) builtin() bool { return o.CLI == "" || o.CLI == CLIBuiltin }

// Overrides is the value of agent.docker.overrides.
type Overrides struct {
	Roles   map[string]Override `json:"roles,omitempty"`
	Workers map[string]Override `json:"workers,omitempty"`
}

// ParseOverrides decodes agent.docker.overrides, refusing unknown keys so a
// typo is not silently ignored.
func ParseOverrides(s string) (Overrides, error) {
	var o Overrides
	if s == "" {
		return o, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Overrides{}, fmt.Errorf("%s: %w", OverridesSetting.Key, err)
	}
	for _, m := range []map[string]Override{o.Roles, o.Workers} {
		for id, ov := range m {
			if ov.CLI != "" && !slices.Contains(cliNames, ov.CLI) {
				return Overrides{}, fmt.Errorf("%s: %s: cli %q is not one of %s", OverridesSetting.Key, id, ov.CLI, strings.Join(cliNames, ", "))
			}
		}
	}
	return o, nil
}

// For merges the role's override and then the worker's over base.
func (o Overrides) For(base Override, worker, role string) Override {
	for _, ov := range []Override{o.Roles[role], o.Workers[worker]} {
		if ov.Image != "" {
			base.Image = ov.Image
		}
		if ov.Command != "" {
			base.Command = ov.Command
		}
		if ov.CLI != "" {
			base.CLI = ov.CLI
		}
		base.Networks = append(base.Networks, ov.Networks...)
	}
	return base
}

// ParseEnv decodes a JSON object of environment variables.
func ParseEnv(key, s string) (map[string]string, error) {
	env := map[string]string{}
	if s == "" {
		return env, nil
	}
	if err := json.Unmarshal([]byte(s), &env); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of strings: %w", key, err)
	}
	return env, nil
}

package skill

import "github.com/helixml/helix-org/domain"

// Operational config keys of the skill factory.
var (
	BuildTimeoutSetting = domain.SettingSpec{Key: "skill.build_timeout", Type: domain.SettingDuration, Default: "5m",
		Description: "Longest one skill image build may take."}
	BuildMemorySetting = domain.SettingSpec{Key: "skill.build_memory", Type: domain.SettingString, Default: "1g",
		Description: "Memory cap of each build step's container."}
	MaxImageSetting = domain.SettingSpec{Key: "skill.max_image_size", Type: domain.SettingString, Default: "1g",
		Description: "Largest skill image kept; a bigger build is deleted and reported as a failure."}
	HealthTimeoutSetting = domain.SettingSpec{Key: "skill.health_timeout", Type: domain.SettingDuration, Default: "30s",
		Description: "How long a starting skill has to answer GET /health with 200."}
	CallTimeoutSetting = domain.SettingSpec{Key: "skill.call_timeout", Type: domain.SettingDuration, Default: "2m",
		Description: "Longest one POST /execute may take."}
	IdleTimeoutSetting = domain.SettingSpec{Key: "skill.idle_timeout", Type: domain.SettingDuration, Default: "15m",
		Description: "A skill not called for this long is stopped; its next call starts it again. 0 never stops."}
	MemorySetting = domain.SettingSpec{Key: "skill.memory", Type: domain.SettingString, Default: "256m",
		Description: "Memory cap of a skill container (no swap)."}
	CPUsSetting = domain.SettingSpec{Key: "skill.cpus", Type: domain.SettingString, Default: "0.5",
		Description: "CPU cap of a skill container, in cores."}
	PidsSetting = domain.SettingSpec{Key: "skill.pids", Type: domain.SettingInt, Default: "128",
		Description: "Most processes and threads in a skill container."}
	TmpSetting = domain.SettingSpec{Key: "skill.tmp_size", Type: domain.SettingString, Default: "64m",
		Description: "Size of a skill container's tmpfs at /tmp; its root file system is read-only."}
	OCIRuntimeSetting = domain.SettingSpec{Key: "skill.oci_runtime", Type: domain.SettingString, RunsCode: true,
		Description: "Alternative OCI runtime for skill containers, e.g. runsc; empty uses the daemon's default."}
	EnvSetting = domain.SettingSpec{Key: "skill.env", Type: domain.SettingJSON, Default: "{}", Secret: true, RunsCode: true,
		Description: `Environment of skill containers, per skill: {"weather":{"API_KEY":"…"}}. Encrypted at rest; never reachable over MCP.`}
	NetworksSetting = domain.SettingSpec{Key: "skill.networks", Type: domain.SettingJSON, Default: "{}", RunsCode: true,
		Description: `Extra Docker networks a skill joins, e.g. for egress: {"weather":["egress"]}. Skills reach nothing by default.`}
	ShimSetting = domain.SettingSpec{Key: "skill.shim", Type: domain.SettingString, RunsCode: true,
		Description: "Host path of the static skill shim (CGO_ENABLED=0 go build ./agent/skill/shim); empty looks for helix-org-skill-shim beside the helix-org binary, then on PATH."}
	MaxFailedBuildsSetting = domain.SettingSpec{Key: "skill.max_failed_builds", Type: domain.SettingInt, Default: "3",
		Description: "Failed builds of one skill in a row an AI worker may make before create_skill tells it to ask a human; a successful build resets the count, a human worker's create_skill is never refused, 0 is no bound."}
	PythonSetting = domain.SettingSpec{Key: "skill.python", Type: domain.SettingString, Default: "/usr/bin/python3", RunsCode: true,
		Description: "Host path of the Python 3 interpreter (Debian's python3) whose files, standard library and shared libraries make the python template's base image."}
	BusyboxSetting = domain.SettingSpec{Key: "skill.busybox", Type: domain.SettingString, Default: "/bin/busybox", RunsCode: true,
		Description: "Host path of a static busybox (Debian's busybox-static) for the shell template's base image."}
)

// Settings lists every skill factory config key.
var Settings = domain.Settings{BuildTimeoutSetting, BuildMemorySetting, MaxImageSetting, HealthTimeoutSetting, CallTimeoutSetting,
	IdleTimeoutSetting, MemorySetting, CPUsSetting, PidsSetting, TmpSetting, OCIRuntimeSetting, EnvSetting, NetworksSetting,
	ShimSetting, BusyboxSetting, MaxFailedBuildsSetting, PythonSetting}

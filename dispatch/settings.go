package dispatch

import "github.com/helixml/helix-org/domain"

// Operational config keys read by the dispatcher.
var (
	MaxConcurrentSetting = domain.SettingSpec{Key: "dispatch.max_concurrent", Type: domain.SettingInt, Default: "4",
		Description: "Most activations one server runs at once, across all its workers."}
	TimeoutSetting = domain.SettingSpec{Key: "dispatch.timeout", Type: domain.SettingDuration, Default: "10m",
		Description: "Longest one activation may run before it is killed."}
	MaxDepthSetting = domain.SettingSpec{Key: "dispatch.max_depth", Type: domain.SettingInt, Default: "8",
		Description: "Deepest chain of AI runs waking each other: a run whose triggers are all deeper is parked and the owner told."}
	LeaseSetting = domain.SettingSpec{Key: "dispatch.lease", Type: domain.SettingDuration, Default: "30s",
		Description: "Lease of a running activation, renewed while its agent lives; one that lapses is failed and its triggers run again."}
	MaxStartAttemptsSetting = domain.SettingSpec{Key: "dispatch.max_start_attempts", Type: domain.SettingInt, Default: "5",
		Description: "Runs whose agent never starts (binary or image missing, runtime config missing) before their triggers are parked for an operator (`helix-org triggers`); below 1 counts as 1."}
	StartBackoffSetting = domain.SettingSpec{Key: "dispatch.start_backoff", Type: domain.SettingDuration, Default: "10s",
		Description: "Wait before retrying triggers whose agent did not start; doubles with each attempt."}
	StartBackoffMaxSetting = domain.SettingSpec{Key: "dispatch.start_backoff_max", Type: domain.SettingDuration, Default: "5m",
		Description: "Longest wait between retries of triggers whose agent did not start."}
)

// PolicySetting overrides the embedded agent.md.
var PolicySetting = domain.SettingSpec{Key: "agent.policy", Type: domain.SettingString,
	Description: "Org-wide agent policy written to each worker's agent.md; empty uses the embedded default."}

// Settings lists every dispatch config key.
var Settings = domain.Settings{MaxConcurrentSetting, TimeoutSetting, MaxDepthSetting, LeaseSetting,
	MaxStartAttemptsSetting, StartBackoffSetting, StartBackoffMaxSetting, PolicySetting, MemoryTokensSetting, ConstraintRelevanceSetting, HybridSetting,
	domain.EmbeddingsSetting, domain.EmbeddingModelSetting}

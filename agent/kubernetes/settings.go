package kubernetes

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Operational config keys of the kubernetes runtime.
var (
	KubeconfigSetting = domain.SettingSpec{Key: "kubernetes.kubeconfig", Type: domain.SettingString, RunsCode: true,
		Description: "Path of the kubeconfig file the kubernetes runtime uses; empty uses the in-cluster service account (the server runs in a pod)."}
	NamespaceSetting = domain.SettingSpec{Key: "kubernetes.namespace", Type: domain.SettingString, Default: "default", RunsCode: true,
		Description: "Namespace the kubernetes runtime creates each activation's Job and Secret in."}
	ImageSetting = domain.SettingSpec{Key: "kubernetes.image", Type: domain.SettingString, Default: DefaultImage, RunsCode: true,
		Description: "Image of each activation's pod when agent.runtime is kubernetes: one holding a static helix-org at /usr/local/bin/helix-org (see docs/runtimes.md); kubernetes.overrides may pick another per role or worker."}
	CommandSetting = domain.SettingSpec{Key: "kubernetes.command", Type: domain.SettingString, Default: DefaultCommand, RunsCode: true,
		Description: "Command each activation's pod runs, split on spaces; the run's Secret is mounted at " + MountPath + " (prompt, environment files, and one file per secret variable)."}
	ServerURLSetting = domain.SettingSpec{Key: "kubernetes.server_url", Type: domain.SettingString,
		Description: "Base URL at which pods reach this server (its MCP endpoints and model relay), e.g. http://helix-org.helix.svc:8080; required for the kubernetes runtime."}
	CPUSetting = domain.SettingSpec{Key: "kubernetes.cpu", Type: domain.SettingString, Default: "1",
		Description: "CPU request and limit of an activation's pod, as Kubernetes writes quantities, e.g. 500m or 2.",
		Validate:    func(v string) error { return Pod{CPU: v}.check("kubernetes.cpu") }}
	MemorySetting = domain.SettingSpec{Key: "kubernetes.memory", Type: domain.SettingString, Default: "1Gi",
		Description: "Memory request and limit of an activation's pod, e.g. 512Mi or 2Gi.",
		Validate:    func(v string) error { return Pod{Memory: v}.check("kubernetes.memory") }}
	OverridesSetting = domain.SettingSpec{Key: overridesKey, Type: domain.SettingJSON, Default: "{}", RunsCode: true,
		Description: `Per-role and per-worker image, cpu and memory: {"roles":{"r-dev":{"memory":"4Gi"}},"workers":{"w-x":{"image":"x:2","cpu":"2"}}}; a worker's entry beats its role's.`,
		Validate:    func(v string) error { _, err := ParseOverrides(v); return err }}
)

// Settings lists every kubernetes runtime config key.
var Settings = domain.Settings{KubeconfigSetting, NamespaceSetting, ImageSetting, CommandSetting, ServerURLSetting,
	CPUSetting, MemorySetting, OverridesSetting}

// Defaults of the image and its command.
const (
	DefaultImage   = "helix-org-agent:latest"
	DefaultCommand = "/usr/local/bin/helix-org agent run --from " + MountPath
	// MountPath is where the run's Secret is mounted in the pod.
	MountPath = "/run/helix-org"
)

// Pod is what a role or worker may change about an activation's pod.
type Pod struct {
	Image  string `json:"image,omitempty"`
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// check refuses a quantity Kubernetes would refuse, naming the key.
func (p Pod) check(key string) error {
	for name, q := range map[string]string{"cpu": p.CPU, "memory": p.Memory} {
		if q == "" {
			continue
		}
		if err := checkQuantity(q); err != nil {
			return fmt.Errorf("%s: %s %q is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi): %w", key, name, q, err)
		}
	}
	return nil
}

const overridesKey = "kubernetes.overrides"

// Overrides is the value of kubernetes.overrides.
type Overrides struct {
	Roles   map[string]Pod `json:"roles,omitempty"`
	Workers map[string]Pod `json:"workers,omitempty"`
}

// ParseOverrides decodes kubernetes.overrides, refusing unknown keys and
// bad quantities so a typo is not silently ignored.
func ParseOverrides(s string) (Overrides, error) {
	var o Overrides
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Overrides{}, fmt.Errorf("%s: %w", overridesKey, err)
	}
	for _, m := range []map[string]Pod{o.Roles, o.Workers} {
		for id, p := range m {
			if err := p.check(overridesKey + ": " + id); err != nil {
				return Overrides{}, err
			}
		}
	}
	return o, nil
}

// For merges the role's entry and then the worker's over base.
func (o Overrides) For(base Pod, worker, role string) Pod {
	for _, p := range []Pod{o.Roles[role], o.Workers[worker]} {
		if p.Image != "" {
			base.Image = p.Image
		}
		if p.CPU != "" {
			base.CPU = p.CPU
		}
		if p.Memory != "" {
			base.Memory = p.Memory
		}
	}
	return base
}

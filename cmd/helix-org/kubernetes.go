package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// clusterRuntime builds the kubernetes runtime of one run from the
// kubernetes.* settings, read per run; its clients are kept across runs.
func clusterRuntime(st *store.Store, log *slog.Logger) func(ctx context.Context, llm *agent.LLMConfig) (domain.Runtime, error) {
	clients := &kubernetes.Clients{}
	org := orgLabel(st.Path())
	return func(ctx context.Context, llm *agent.LLMConfig) (domain.Runtime, error) {
		get := func(spec domain.SettingSpec) string { v, _ := st.SettingOr(ctx, spec); return v }
		client, err := clients.For(get(kubernetes.KubeconfigSetting))
		if err != nil {
			return nil, err
		}
		ov, err := kubernetes.ParseOverrides(get(kubernetes.OverridesSetting))
		if err != nil {
			return nil, err
		}
		return &kubernetes.Runtime{Client: client, Namespace: get(kubernetes.NamespaceSetting), Org: org, Overrides: ov,
			Pod:     kubernetes.Pod{Image: get(kubernetes.ImageSetting), CPU: get(kubernetes.CPUSetting), Memory: get(kubernetes.MemorySetting)},
			Command: strings.Fields(get(kubernetes.CommandSetting)), ServerURL: strings.TrimRight(get(kubernetes.ServerURLSetting), "/"), LLM: llm, Logger: log,
			RoleOf: func(ctx context.Context, worker string) (string, error) {
				r, err := roleOf(ctx, st, worker)
				return r.ID, err
			}}, nil
	}
}

// orgLabel names the org on its Jobs: one value per database, so every
// server on it labels alike and two orgs on one cluster never meet.
func orgLabel(db string) string {
	sum := sha256.Sum256([]byte(db))
	return "org-" + hex.EncodeToString(sum[:6])
}

// adoptsJobs says a run cut off by a crash is the kubernetes runtime's,
// still on it: its Job goes on in the cluster, and the next server follows
// it rather than starting the run again.
func adoptsJobs(st *store.Store) func(ctx context.Context, a domain.Activation) bool {
	return func(ctx context.Context, a domain.Activation) bool {
		rt, _ := st.SettingOr(ctx, agent.RuntimeSetting)
		return a.Process != nil && a.Process.Runtime == agent.RuntimeKubernetes && rt == agent.RuntimeKubernetes
	}
}

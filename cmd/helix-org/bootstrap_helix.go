package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/store"
)

func newBootstrapHelixCmd() *cobra.Command {
	var db dbFlags
	cmd := &cobra.Command{
		Use:   "helix-runtime",
		Short: "Check that the helix runtime can run activations: helix.url answers, helix.api_key is good, helix.provider and helix.model exist there",
		Long: `helix-runtime asks the Helix control plane at helix.url, with helix.api_key,
who the key belongs to, and whether helix.provider is one of its providers and
helix.model one of that provider's models. Set them first with
helix-org config set; serve refuses to start on agent.runtime helix when
this check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return db.with(cmd.Context(), func(st *store.Store) error { return runBootstrapHelix(cmd.Context(), st, cmd.OutOrStdout()) })
		},
	}
	db.bind(cmd.Flags())
	return cmd
}

func runBootstrapHelix(ctx context.Context, st *store.Store, w io.Writer) error {
	cfg := helix.ReadConfig(ctx, st)
	me, err := helix.Check(ctx, helix.NewClient(cfg, allowPrivate(st)), cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Helix at %s answers for %s (%s, %s)\n", cfg.URL, me.User, helix.URLSetting.Key, helix.APIKeySetting.Key)
	fmt.Fprintf(w, "provider %s and model %s are on Helix (%s, %s)\n", cfg.Provider, cfg.Model, helix.ProviderSetting.Key, helix.ModelSetting.Key)
	if rt, _ := st.SettingOr(ctx, agent.RuntimeSetting); rt != agent.RuntimeHelix {
		fmt.Fprintf(w, "agent.runtime is %q: run activations on Helix with `helix-org config set %s %s`\n", rt, agent.RuntimeSetting.Key, agent.RuntimeHelix)
		return nil
	}
	fmt.Fprintf(w, "agent.runtime is %s: activations run on Helix, at most %d at once (%s)\n", agent.RuntimeHelix, cfg.Quota, helix.DesktopQuotaSetting.Key)
	return nil
}

// checkHelix is serve's check before it dispatches: on agent.runtime
// helix, Helix must take the key and have the provider and model, or
// every run would fail; the error says which keys to fix.
func checkHelix(ctx context.Context, st *store.Store) error {
	if rt, _ := st.SettingOr(ctx, agent.RuntimeSetting); rt != agent.RuntimeHelix {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg := helix.ReadConfig(ctx, st)
	if _, err := helix.Check(ctx, helix.NewClient(cfg, allowPrivate(st)), cfg); err != nil {
		return fmt.Errorf("agent.runtime is helix, and Helix cannot take its runs: %w", err)
	}
	return nil
}

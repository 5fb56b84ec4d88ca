package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/cmd/helix-org/internal/hugeheap"
	"github.com/helixml/helix-org/cmd/helix-org/internal/startgc"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/gateway"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// version is set at link time: -ldflags "-X main.version=…".
var version = "dev"

// dbFlags are the flags every command that opens the database shares.
type dbFlags struct {
	DB      string
	KeyFile string
	// Init lets open create a database that is not there; only commands
	// that bind --init can set it.
	Init    bool
	hasInit bool
}

func (f *dbFlags) bind(flags *pflag.FlagSet) {
	flags.StringVar(&f.DB, "db", envOr("HELIX_ORG_DB", "./helix-org.db"), "SQLite database file, or a postgres:// URL (env HELIX_ORG_DB)")
	flags.StringVar(&f.KeyFile, "key-file", envOr("HELIX_ORG_KEY_FILE", ""), "file holding the key that encrypts secret settings; default <db>.key, ./helix-org.key for PostgreSQL (env HELIX_ORG_KEY_FILE)")
}

// bindInit adds --init, for the commands that may start a new database.
func (f *dbFlags) bindInit(flags *pflag.FlagSet) {
	f.hasInit = true
	flags.BoolVar(&f.Init, "init", false, "create the database if it does not exist")
}

// open opens the database of the org --org chose (orgOf). It creates
// one only when told to (--init), so a mistyped --db or the wrong
// directory is an error naming the path looked at, not a new, empty
// organisation.
func (f *dbFlags) open(ctx context.Context) (*store.Store, error) {
	org := orgOf(ctx)
	of, err := f.forOrg(org)
	if err != nil {
		return nil, err
	}
	if store.IsPostgres(of.DB) {
		key := of.KeyFile
		if key == "" {
			key = "helix-org.key"
		}
		st, err := store.Open(ctx, of.DB, store.Options{KeyFile: key, Transports: transports.Specs()})
		switch {
		case missingPostgresDB(err) && org != "":
			return nil, fmt.Errorf("%w: no org named %s on this PostgreSQL server: create it with `helix-org orgs create %s`", errNoDatabase, org, org)
		case missingPostgresDB(err):
			return nil, fmt.Errorf("%w: %w", errNoDatabase, err)
		}
		return st, err
	}
	if _, err := os.Stat(of.DB); errors.Is(err, fs.ErrNotExist) && !f.Init {
		abs, _ := filepath.Abs(of.DB)
		if org != "" {
			return nil, fmt.Errorf("%w: no org named %s (looked for %s): create it with `helix-org orgs create %s`", errNoDatabase, org, abs, org)
		}
		hint := "create one with `helix-org bootstrap --init`"
		if f.hasInit {
			hint = "pass --init to create a new one"
		}
		return nil, fmt.Errorf("%w at %s: run where it is, point --db (or HELIX_ORG_DB) at it, or %s", errNoDatabase, abs, hint)
	}
	if org != "" && f.Init {
		// --init --org creates the org as `orgs create` does.
		if err := os.MkdirAll(filepath.Dir(of.DB), 0o700); err != nil {
			return nil, fmt.Errorf("create org %s: %w", org, err)
		}
	}
	return store.Open(ctx, of.DB, store.Options{KeyFile: of.KeyFile, Transports: transports.Specs()})
}

// with opens the database for one command's run and closes it after.
func (f *dbFlags) with(ctx context.Context, run func(*store.Store) error) error {
	st, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return run(st)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// settings is the registry of every operational config key.
func settings() domain.Settings {
	return slices.Concat(tools.Settings, dispatch.Settings, domain.Settings{gateway.CallTimeoutSetting}, agent.Settings, helix.Settings, docker.Settings, kubernetes.Settings, skill.Settings, transports.Settings(), ui.Settings,
		domain.Settings{domain.PricesSetting, domain.DefaultPriceSetting, domain.MCPPricesSetting, domain.AuditRetentionSetting})
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "helix-org",
		Short:         "An organisation of humans and AI agents, served over MCP",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("helix-org {{.Version}}\n")
	var org string
	root.PersistentFlags().StringVar(&org, "org", os.Getenv("HELIX_ORG_ORG"), "act on this org (helix-org orgs create); default the default org (env HELIX_ORG_ORG)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Name() != "serve" {
			// serve does both once it has answered (warmGate).
			startgc.Resume()
			hugeheap.End()
		}
		if org == "" {
			return nil
		}
		if err := domain.ValidateOrgName(org); err != nil {
			return fmt.Errorf("--org: %w", err)
		}
		if cmd.Name() == "serve" {
			return errors.New("--org: serve serves every org (the default at /, each other at /orgs/<name>/); --org is for the commands that act on one")
		}
		cmd.SetContext(withOrg(cmd.Context(), org))
		return nil
	}
	root.AddCommand(newServeCmd(), newChatCmd(), newBootstrapCmd(), newTokenCmd(), newConfigCmd(), newVersionCmd(), newAgentCmd(), newActivationsCmd(), newAuditCmd(), newTriggersCmd(), newSpendCmd(), newTasksCmd(), newInsightsCmd())
	root.AddCommand(newOrgsCmd(), newCallCmd(), newInviteCmd(), newInvitationsCmd(), newToolsCmd(), newMCPServersCmd(), newBackupCmd(), newExportCmd(), newImportCmd(), newSlackCmd())
	refuseUnknownSubcommands(root)
	return root
}

package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/webhook"
)

// version is set at link time: -ldflags "-X main.version=…".
var version = "dev"

// dbFlags are the flags every command that opens the database shares.
type dbFlags struct {
	DB      string
	KeyFile string
}

func (f *dbFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.DB, "db", envOr("HELIX_ORG_DB", "./helix-org.db"), "SQLite database file (env HELIX_ORG_DB)")
	fs.StringVar(&f.KeyFile, "key-file", envOr("HELIX_ORG_KEY_FILE", ""), "file holding the key that encrypts secret settings; default <db>.key (env HELIX_ORG_KEY_FILE)")
}

// openExisting opens the database only if the file is there, so a mistyped
// --db is an error rather than a new, empty organisation.
func (f *dbFlags) openExisting(ctx context.Context) (*store.Store, error) {
	if _, err := os.Stat(f.DB); err != nil {
		return nil, fmt.Errorf("database %s does not exist: check --db (or HELIX_ORG_DB), or create it with `helix-org bootstrap --db %s`", f.DB, f.DB)
	}
	return f.open(ctx)
}

func (f *dbFlags) open(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, f.DB, store.Options{KeyFile: f.KeyFile})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.DB, err)
	}
	return st, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// settings is the registry of every operational config key.
func settings() domain.Settings {
	return slices.Concat(tools.Settings, dispatch.Settings, agent.Settings, docker.Settings, skill.Settings, webhook.Settings, email.Settings, github.Settings)
}

func newRootCmd() *cobra.Command {
	tools.Version = version
	root := &cobra.Command{
		Use:           "helix-org",
		Short:         "An organisation of humans and AI agents, served over MCP",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newChatCmd(), newBootstrapCmd(), newTokenCmd(), newConfigCmd(), newVersionCmd(), newAgentCmd(), newActivationsCmd())
	return root
}

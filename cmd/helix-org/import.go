package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/orgdir"
	"github.com/helixml/helix-org/tools"
)

type importConfig struct {
	dbFlags
	Secrets              string
	WithoutStreamSecrets bool
	AllowExecSettings    bool
}

func newImportCmd() *cobra.Command {
	var cfg importConfig
	cmd := &cobra.Command{
		Use:   "import <dir>",
		Short: "Read an export (helix-org export) into a new database: all of it or, on any error, nothing",
		Long: `import reads a directory written by helix-org export into a database that
holds no org yet — a new one: pass --init — in one transaction, keeping ids,
creators and times. Secrets are not in an export: give them with --secrets
<file> (README.txt in the export shows its form and what it left out); the
import then lists what is still to be set. A stream's transport secret can
be given only here, so an import missing one is refused unless
--without-stream-secrets. Imported skills are built again from their source
with create_skill.

An export can come from anyone, so import holds it to the rules the tools
hold changes to: every live grant must be one grant_tool could have made
(a known tool, given by a worker above the holder who holds it too, for no
longer and with approval when its own has it), and w-owner must not be
dismissed. Settings that make the server run code (agent.runtime,
agent.command, agent.bash, the docker runtime's and skills' image, user,
OCI runtime, environment and host binaries) are refused unless
--allow-exec-settings. Each error names the file and the record.`,
		Example: `  helix-org import --init --db new.db ./org-export
  helix-org import --init --db new.db --secrets secrets.json ./org-export`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var secrets orgdir.Secrets
			if cfg.Secrets != "" {
				b, err := os.ReadFile(cfg.Secrets)
				if err != nil {
					return fmt.Errorf("read secrets: %w", err)
				}
				if err := json.Unmarshal(b, &secrets); err != nil {
					return fmt.Errorf("read secrets: %s is not a JSON object of streams and config: %w", cfg.Secrets, err)
				}
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				rep, err := orgdir.Import(cmd.Context(), st, args[0], orgdir.ImportOptions{Settings: settings(), Secrets: secrets,
					WithoutStreamSecrets: cfg.WithoutStreamSecrets, Tools: tools.Names(), AllowExecSettings: cfg.AllowExecSettings})
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "imported %s into %s:", args[0], st.Path())
				for _, k := range slices.Sorted(maps.Keys(rep.Counts)) {
					fmt.Fprintf(out, " %d %s,", rep.Counts[k], k)
				}
				fmt.Fprintln(out, " recorded on s-org")
				if len(rep.Secrets) > 0 {
					fmt.Fprintln(out, "still to be set (secrets are never exported):")
					for _, s := range rep.Secrets {
						fmt.Fprintf(out, "  - %s\n", s)
					}
					fmt.Fprintln(out, "set a config secret with: helix-org config set <key> -")
				}
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cfg.bindInit(cmd.Flags())
	cmd.Flags().StringVar(&cfg.Secrets, "secrets", "", `JSON file of the secrets the export left out: {"streams":{"<id>":{"<field>":"…"}},"config":{"<key>":"…"}}`)
	cmd.Flags().BoolVar(&cfg.WithoutStreamSecrets, "without-stream-secrets", false, "import streams whose transport secrets are not given without them")
	cmd.Flags().BoolVar(&cfg.AllowExecSettings, "allow-exec-settings", false, "apply the export's settings that make the server run code (agent.command, agent.bash, runtimes, sandboxes)")
	return cmd
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
)

// configConfig holds the flags of the config subcommands. Operational config
// is read and written only here, by opening the database directly: it is
// deliberately never reachable over MCP, so no worker can read a secret or
// loosen a limit.
type configConfig struct {
	dbFlags
	RevealSecrets bool
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and change operational config stored in the database (operator only, never over MCP)",
		Long: `Read and change operational config stored in the database.

A running server reads each setting when it needs it, so a change takes
effect without a restart. Secret settings are encrypted at rest with the
key file (default <db>.key) and shown redacted unless --reveal-secrets.`,
	}
	cmd.AddCommand(newConfigSetCmd(), newConfigGetCmd(), newConfigListCmd(), newConfigDeleteCmd())
	return cmd
}

func newConfigSetCmd() *cobra.Command {
	var cfg configConfig
	cmd := &cobra.Command{
		Use:   "set <key> <value>",
		Short: "Set a config value; a value of - reads it from stdin, so secrets stay out of shell history",
		Example: `  helix-org config set dispatch.max_concurrent 8
  printf %s "$KEY" | helix-org config set agent.api_key -`,
		Args:         cobra.ExactArgs(2),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := settings().Lookup(args[0])
			if err != nil {
				return err
			}
			value := args[1]
			if value == "-" {
				if value, err = readValue(cmd.InOrStdin()); err != nil {
					return fmt.Errorf("read %s from stdin: %w", spec.Key, err)
				}
			}
			// Check before opening so a typo never creates a database file.
			if err := spec.Check(value); err != nil {
				return err
			}
			st, err := cfg.open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.SetSetting(cmd.Context(), spec, value); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s = %s\n", spec.Key, shown(spec, value, false))
			return nil
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

// readValue reads a whole value from r, dropping the trailing newline that
// echo or a terminal adds.
func readValue(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func newConfigGetCmd() *cobra.Command {
	var cfg configConfig
	cmd := &cobra.Command{
		Use:          "get <key>",
		Short:        "Print a config value, or its default when unset (noted on stderr)",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := settings().Lookup(args[0])
			if err != nil {
				return err
			}
			st, err := cfg.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			value, ok, err := st.Setting(cmd.Context(), spec.Key)
			if err != nil {
				return err
			}
			if !ok {
				// The note goes to stderr so $(helix-org config get …) is
				// still just the value.
				value = spec.Default
				fmt.Fprintf(cmd.ErrOrStderr(), "%s is not set; showing its default\n", spec.Key)
			}
			fmt.Fprintln(cmd.OutOrStdout(), shown(spec, value, cfg.RevealSecrets))
			return nil
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.RevealSecrets, "reveal-secrets", false, "print secret values instead of "+domain.Redacted)
	return cmd
}

func newConfigListCmd() *cobra.Command {
	var cfg configConfig
	cmd := &cobra.Command{
		Use:          "list",
		Short:        "List every config key with its value or default, type and description",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cfg.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			specs := slices.SortedFunc(slices.Values(settings()), func(a, b domain.SettingSpec) int { return strings.Compare(a.Key, b.Key) })
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVALUE\tTYPE\tDESCRIPTION")
			for _, spec := range specs {
				value, ok, err := st.Setting(cmd.Context(), spec.Key)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.Key, listValue(spec, value, ok, cfg.RevealSecrets), spec.Type, spec.Description)
			}
			return tw.Flush()
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.RevealSecrets, "reveal-secrets", false, "print secret values instead of "+domain.Redacted)
	return cmd
}

// listValue is one table cell: the value, or the default marked as such,
// kept on one line so the table stays aligned.
func listValue(spec domain.SettingSpec, value string, set, reveal bool) string {
	if !set {
		if spec.Default == "" {
			return "(not set)"
		}
		return oneLine(spec.Default) + " (default)"
	}
	if value == "" {
		return `""`
	}
	return oneLine(shown(spec, value, reveal))
}

// oneLine shortens a multi-line value (a policy, say) to its first line;
// config get prints the whole of it.
func oneLine(v string) string {
	v = strings.ReplaceAll(v, "\t", " ")
	first, _, multi := strings.Cut(v, "\n")
	if multi {
		return fmt.Sprintf("%s … (%d lines)", first, strings.Count(v, "\n")+1)
	}
	return v
}

// shown is a value as it may be printed. An empty value reveals nothing, and
// redacting it would wrongly suggest a secret is set.
func shown(spec domain.SettingSpec, value string, reveal bool) string {
	if reveal || value == "" {
		return value
	}
	return spec.Redact(value)
}

func newConfigDeleteCmd() *cobra.Command {
	var cfg configConfig
	cmd := &cobra.Command{
		Use:          "delete <key>",
		Short:        "Remove a config value so its default applies again",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := settings().Lookup(args[0])
			if err != nil {
				return err
			}
			st, err := cfg.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.DeleteSetting(cmd.Context(), spec.Key); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s; the default (%s) applies again\n", spec.Key, defaultText(spec))
			return nil
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

func defaultText(spec domain.SettingSpec) string {
	if spec.Default == "" {
		return "empty"
	}
	return spec.Default
}

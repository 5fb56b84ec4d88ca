package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// configConfig holds the flags of the config subcommands. Operational config
// is read and written only here, by opening the database directly: it is
// deliberately never reachable over MCP, so no worker can read a secret or
// loosen a limit.
type configConfig struct {
	dbFlags
	RevealSecrets bool
	Output        string
}

// settingView is one setting as config get and list print it with -o json.
type settingView struct {
	Key         string `json:"key"`
	Value       string `json:"value"`
	Set         bool   `json:"set"`
	Default     string `json:"default"`
	Type        string `json:"type"`
	Secret      bool   `json:"secret"`
	Description string `json:"description"`
}

func viewOf(spec domain.SettingSpec, value string, set, reveal bool) settingView {
	if !set {
		value = spec.Default
	}
	return settingView{Key: spec.Key, Value: shown(spec, value, reveal), Set: set, Default: spec.Default, Type: string(spec.Type),
		Secret: spec.HasSecret(), Description: spec.Description}
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
		Short: "Set a config value; - reads it from stdin (prompting, without echo, on a terminal), so secrets stay out of shell history",
		Example: `  helix-org config set dispatch.max_concurrent 8
  helix-org config set agent.api_key -            # prompts; what you type is not shown
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
				if value, err = readValue(cmd.InOrStdin(), cmd.ErrOrStderr(), spec.Key); err != nil {
					return fmt.Errorf("read %s from stdin: %w", spec.Key, err)
				}
			}
			// Check before opening so a typo never creates a database file.
			if err := spec.Check(value); err != nil {
				return err
			}
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				if err := st.SetSetting(cmd.Context(), spec, value); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s = %s\n", spec.Key, shown(spec, value, false))
				if spec.Key == agent.SandboxSetting.Key && value == agent.SandboxOff {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: with %s %s the host runtimes (claude, codex, gemini, opencode, command, builtin) run agents as the server's user, "+
						"able to read the database, its key file, every worker's directory and other runs' tokens; every such run is warned about.\n",
						agent.SandboxSetting.Key, agent.SandboxOff)
				}
				if spec.Key == agent.BashSetting.Key || spec.Key == agent.RuntimeSetting.Key || spec.Key == agent.SandboxSetting.Key {
					warnHostShell(cmd.Context(), cmd.ErrOrStderr(), st)
				}
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cfg.bindInit(cmd.Flags())
	cmd.ValidArgsFunction = configValues
	return cmd
}

// warnHostShell says so when agent.bash is on while activations run on
// the host unsandboxed: the shell runs as the server's user, which can
// read the database, its key file and every worker's directory. In the
// sandbox or a container it can reach none of them.
func warnHostShell(ctx context.Context, w io.Writer, st *store.Store) {
	scope, err := bashScope(ctx, st)
	if err != nil || !scope.Any() {
		return
	}
	if rt, _ := st.SettingOr(ctx, agent.RuntimeSetting); rt == agent.RuntimeDocker {
		return
	}
	if sb, _ := st.SettingOr(ctx, agent.SandboxSetting); sb != agent.SandboxOff {
		return
	}
	fmt.Fprintf(w, "warning: %s gives the built-in agent a shell on this host, running as the server's user: it can read the database, "+
		"its key file and every worker's directory. Prefer `helix-org config set %s %s`, where the shell is confined to the container.\n",
		agent.BashSetting.Key, agent.RuntimeSetting.Key, agent.RuntimeDocker)
}

// readValue reads a value given as "-". On a terminal it prompts and
// reads one line with echo off, so a secret is neither in shell history
// nor on screen; otherwise it reads all of r, dropping the trailing
// newline that echo adds.
func readValue(r io.Reader, prompt io.Writer, key string) (string, error) {
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(prompt, "%s (input hidden): ", key)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		return string(b), err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// configValues completes config set: the key, then an enum's values or a
// boolean's.
func configValues(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return configKeys(cmd, args, toComplete)
	}
	spec, err := settings().Lookup(args[0])
	if err != nil || len(args) > 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	values := spec.Enum
	if spec.Type == domain.SettingBool {
		values = []string{"true", "false"}
	}
	return matching(values, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// withSetting opens the database for a command on one config key.
func (c *configConfig) withSetting(ctx context.Context, key string, run func(*store.Store, domain.SettingSpec) error) error {
	spec, err := settings().Lookup(key)
	if err != nil {
		return err
	}
	return c.with(ctx, func(st *store.Store) error { return run(st, spec) })
}

func newConfigGetCmd() *cobra.Command {
	var cfg configConfig
	cmd := &cobra.Command{
		Use:          "get <key>",
		Short:        "Print a config value, or its default when unset (noted on stderr)",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.withSetting(cmd.Context(), args[0], func(st *store.Store, spec domain.SettingSpec) error {
				value, ok, err := st.Setting(cmd.Context(), spec.Key)
				if err != nil {
					return err
				}
				return emit(cmd.OutOrStdout(), cfg.Output, viewOf(spec, value, ok, cfg.RevealSecrets), func() error {
					if !ok {
						// The note goes to stderr so $(helix-org config get …) is
						// still just the value.
						value = spec.Default
						fmt.Fprintf(cmd.ErrOrStderr(), "%s is not set; showing its default\n", spec.Key)
					}
					_, err := fmt.Fprintln(cmd.OutOrStdout(), shown(spec, value, cfg.RevealSecrets))
					return err
				})
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.RevealSecrets, "reveal-secrets", false, "print secret values instead of "+domain.Redacted)
	bindData(cmd, &cfg.Output)
	cmd.ValidArgsFunction = configKeys
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
			return cfg.with(cmd.Context(), func(st *store.Store) error {
				specs := slices.SortedFunc(slices.Values(settings()), func(a, b domain.SettingSpec) int { return strings.Compare(a.Key, b.Key) })
				if cfg.Output == outJSON || cfg.Output == outYAML {
					views := make([]settingView, len(specs))
					for i, spec := range specs {
						value, ok, err := st.Setting(cmd.Context(), spec.Key)
						if err != nil {
							return err
						}
						views[i] = viewOf(spec, value, ok, cfg.RevealSecrets)
					}
					return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"settings": views}, nil)
				}
				rows := make([]configRow, len(specs))
				for i, spec := range specs {
					value, ok, err := st.Setting(cmd.Context(), spec.Key)
					if err != nil {
						return err
					}
					rows[i] = configRow{spec.Key, listValue(spec, value, ok, cfg.RevealSecrets), string(spec.Type), spec.Description}
				}
				cut, err := writeConfigTable(cmd.OutOrStdout(), rows, tableWidth(cmd.OutOrStdout()))
				if cut {
					// On stderr, so the table piped on is only the table.
					fmt.Fprintln(cmd.ErrOrStderr(), "(… marks what was cut to fit: helix-org config get <key> or config list -o json shows it whole)")
				}
				return err
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.Flags().BoolVar(&cfg.RevealSecrets, "reveal-secrets", false, "print secret values instead of "+domain.Redacted)
	bindData(cmd, &cfg.Output)
	return cmd
}

// listValue is one table cell: the value, or the default marked as such,
// kept on one line and short so the table stays aligned and narrow.
func listValue(spec domain.SettingSpec, value string, set, reveal bool) string {
	if !set {
		if spec.Default == "" {
			return "(not set)"
		}
		return fit(oneLine(spec.Default), listValueRunes) + " (default)"
	}
	if value == "" {
		return `""`
	}
	return fit(oneLine(shown(spec, value, reveal)), listValueRunes)
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
		SuggestFor:   []string{"unset", "remove", "rm", "del"},
		Short:        "Remove a config value so its default applies again",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfg.withSetting(cmd.Context(), args[0], func(st *store.Store, spec domain.SettingSpec) error {
				if err := st.DeleteSetting(cmd.Context(), spec.Key); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s; the default (%s) applies again\n", spec.Key, defaultText(spec))
				return nil
			})
		},
	}
	cfg.bind(cmd.Flags())
	cmd.ValidArgsFunction = configKeys
	return cmd
}

func defaultText(spec domain.SettingSpec) string {
	if spec.Default == "" {
		return "empty"
	}
	return spec.Default
}

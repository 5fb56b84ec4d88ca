package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// refuseUnknownSubcommands makes every command below root that only
// groups subcommands refuse one it does not have, as root does, instead
// of printing its help and exiting 0. Bare, such a command still prints
// its help.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !cmd.HasParent() || !cmd.HasAvailableSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownSubcommand(cmd, args[0])
	}
}

// unknownSubcommand says name is not a subcommand of cmd, with the
// closest of cobra's suggestions.
func unknownSubcommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if s := suggestions(cmd, name); len(s) > 0 {
		quoted := make([]string, len(s))
		for i, n := range s {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		return fmt.Errorf("%s; did you mean %s?", msg, strings.Join(quoted, " or "))
	}
	return fmt.Errorf("%s; see %s --help", msg, cmd.CommandPath())
}

// suggestions are the subcommands that list name in their SuggestFor
// ("unset" → delete, not set), else those nearest it in spelling, one
// edit away before two.
func suggestions(cmd *cobra.Command, name string) []string {
	var named []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() && slices.Contains(sub.SuggestFor, name) {
			named = append(named, sub.Name())
		}
	}
	if len(named) > 0 {
		return named
	}
	defer func(d int) { cmd.SuggestionsMinimumDistance = d }(cmd.SuggestionsMinimumDistance)
	for d := 1; d <= 2; d++ {
		cmd.SuggestionsMinimumDistance = d
		if s := cmd.SuggestionsFor(name); len(s) > 0 {
			return s
		}
	}
	return nil
}

package main

import "github.com/spf13/cobra"

// group is a command that only holds others (`helix-org token create`):
// run alone, it prints its help.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.AddCommand(subs...)
	return cmd
}

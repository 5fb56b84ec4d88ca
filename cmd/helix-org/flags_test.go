package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagHelpNamesItsValue: cobra takes a `backticked` word in a flag's
// usage as the name of its value, so "as `helix-org bootstrap` does" showed
// in serve --help as "--bootstrap helix-org bootstrap", a boolean asking
// for an argument. No flag's usage may hold one.
func TestFlagHelpNamesItsValue(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, usage := pflag.UnquoteUsage(f)
				t.Errorf("%s --help shows --%s %s   %s", c.CommandPath(), f.Name, name, usage)
			}
		}
		c.LocalNonPersistentFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestGroupingCommandRefusesUnknown: a command that only groups others
// refuses a subcommand it does not have, with a suggestion when there is
// one, instead of printing its help and exiting 0; bare, it prints help.
func TestGroupingCommandRefusesUnknown(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		wantOut string
	}{
		{[]string{"config", "unset", "agent.runtime"}, `unknown command "unset" for "helix-org config"; did you mean "delete"?`, ""},
		{[]string{"config", "lst"}, `unknown command "lst" for "helix-org config"; did you mean "list"?`, ""},
		{[]string{"token", "bogus"}, `unknown command "bogus" for "helix-org token"; see helix-org token --help`, ""},
		{[]string{"agent", "runn"}, `unknown command "runn" for "helix-org agent"; did you mean "run"?`, ""},
		{[]string{"config"}, "", "Available Commands:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := newRootCmd()
			var out bytes.Buffer
			cmd.SetArgs(tt.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.ExecuteContext(t.Context())
			if tt.wantErr == "" && err != nil {
				t.Errorf("error %v, want none", err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("printed %q, want it to hold %q", out.String(), tt.wantOut)
			}
			if tt.wantErr != "" && strings.Contains(out.String(), "Available Commands:") {
				t.Errorf("printed its help for an unknown subcommand:\n%s", out.String())
			}
		})
	}
}

package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
)

func TestParseByRole(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    map[string]agent.RoleLimits
		wantErr string
	}{
		{"", map[string]agent.RoleLimits{}, ""},
		{"{}", map[string]agent.RoleLimits{}, ""},
		{`{"r-explorer":{"model":"claude-haiku-4-5","max_turns":20}}`, map[string]agent.RoleLimits{"r-explorer": {Model: "claude-haiku-4-5", MaxTurns: 20}}, ""},
		{`{"explorer":{"model":"m"}}`, nil, `agent.by_role: "explorer" is not a role id (r-…)`},
		{`{"r-x":{"max_turns":-1}}`, nil, "agent.by_role: r-x: max_turns must be 0 (agent.max_turns) or more, got -1"},
		{`{"r-x":{"temperature":1}}`, nil, `agent.by_role: want {"r-…":{"model":"…","max_turns":N}}`},
	} {
		got, err := agent.ParseByRole(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseByRole(%s) = %v, want an error containing %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
			t.Errorf("ParseByRole(%s): %v (-want +got):\n%s", tc.value, err, diff)
		}
	}
}

package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/tools"
)

// TestBuiltinFindsTools: a worker holding more tools than the threshold
// is offered find_tools and the core; the tool find_tools returns is
// offered from the next turn on, and calling it works.
func TestBuiltinFindsTools(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			o := newOrg(t, "List the roles.")
			if err := o.h.Store.SetSetting(t.Context(), tools.SearchThresholdSetting, "3"); err != nil {
				t.Fatal(err)
			}
			servertest.Call[any](t, o.h.Owner(t), "grant_tool", map[string]any{"worker": "w-echo", "tool": "list_roles"})
			var roles string
			fake := llmtest.New(t, format, func(turn llmtest.Turn) llmtest.Reply {
				switch {
				case turn.CallsTo("find_tools") == 0:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("find_tools", map[string]any{"query": "list the roles"})}}
				case turn.CallsTo("list_roles") == 0:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_roles", map[string]any{})}}
				}
				roles = turn.Results()[0].Content
				return llmtest.Reply{Text: "Done."}
			})
			if _, _, err := o.run(t, format, fake, agent.LLMConfig{MaxTurns: 5}); err != nil {
				t.Fatal(err)
			}
			turns := fake.Turns()
			if len(turns) != 3 {
				t.Fatalf("%d model calls, want 3", len(turns))
			}
			offered := func(i int) []string {
				var names []string
				for _, tool := range turns[i].Tools {
					names = append(names, tool.Name)
				}
				return names
			}
			if first := offered(0); !slices.Equal(first, []string{"find_tools", "list_streams", "publish", "read_events"}) {
				t.Errorf("first turn offered %v, want find_tools and w-echo's core tools", first)
			}
			if second := offered(1); !slices.Contains(second, "list_roles") {
				t.Errorf("after find_tools, offered %v, want list_roles too", second)
			}
			if !strings.Contains(roles, `"r-echo"`) || !strings.Contains(roles, `"r-owner"`) {
				t.Errorf("list_roles answered %q, want r-echo and r-owner", roles)
			}
		})
	}
}

package tools

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// TestCatalog: within its limits a worker is shown every tool it holds;
// past either, find_tools and the core tools it holds, best ranked first,
// as many as the budget takes; a skill is never core but is found.
func TestCatalog(t *testing.T) {
	skill := domain.Skill{Name: "thermo", Description: "Convert a temperature between Celsius and Fahrenheit.", Version: 1,
		Status: domain.SkillReady, CreatedBy: "w-owner", InputSchema: json.RawMessage(`{"type":"object"}`)}
	few := []string{"read_events", "publish", "create_role"}
	all := append(Names(), skill.ToolName())
	cases := []struct {
		name      string
		granted   []string
		lim       Limits
		searching bool
		// shown, when set, is exactly what is listed; else it is
		// find_tools and core tools within the budget.
		shown []string
	}{
		{"a few grants within the limits", few, Limits{Threshold: 20, Budget: 8192}, false, few},
		{"every tool, no limits", all, Limits{}, false, all},
		{"more tools than the threshold", few, Limits{Threshold: 2}, true, []string{"find_tools", "publish", "read_events"}},
		{"more bytes than the budget", few, Limits{Budget: 1500}, true, nil},
		{"every tool within the default limits", all, Limits{Threshold: 20, Budget: 8192}, true, nil},
		{"every tool within a small budget", all, Limits{Threshold: 20, Budget: 2000}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := NewCatalog(c.lim, Builtins(testTransports, c.granted), Skills([]domain.Skill{skill}, c.granted))
			if cat.Searching() != c.searching {
				t.Fatalf("searching = %v, want %v", cat.Searching(), c.searching)
			}
			names := namesOf(cat.Shown())
			if !slices.IsSorted(names) {
				t.Errorf("shown %v, not in name order", names)
			}
			if c.shown != nil {
				want := slices.Sorted(slices.Values(c.shown))
				if diff := cmp.Diff(want, names); diff != "" {
					t.Errorf("shown (-want +got):\n%s", diff)
				}
				return
			}
			size := 0
			for _, tool := range cat.Shown() {
				size += ShownBytes(tool)
				if tool.Name != "find_tools" && coreRank(tool.Name) == 0 {
					t.Errorf("%s is shown but not in the core", tool.Name)
				}
			}
			if size > c.lim.Budget {
				t.Errorf("shown %v: %d B, over the %d B budget", names, size, c.lim.Budget)
			}
			if !slices.Contains(names, "find_tools") || !slices.Contains(names, "read_events") {
				t.Errorf("shown %v, want find_tools and read_events (core rank 1)", names)
			}
			if found := namesOf(cat.Find("temperature in Fahrenheit", 1)); slices.Contains(c.granted, skill.ToolName()) && !slices.Equal(found, []string{skill.ToolName()}) {
				t.Errorf("find temperature = %v, want the skill", found)
			}
		})
	}
}

func namesOf(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func coreRank(name string) int {
	t, _ := builtin(name)
	return t.core
}

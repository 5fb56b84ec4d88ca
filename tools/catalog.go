package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Offer is one tool a worker may call, as a client is shown it, with its
// rank in the compact core (0: found with find_tools, not shown).
type Offer struct {
	Def  *mcp.Tool
	Core int
}

// Limits bound what a worker's tools/list shows a model. Over either
// limit the worker is shown the compact core and find_tools instead of
// every tool; a zero limit is no limit.
type Limits struct {
	// Threshold is the most tools shown whole.
	Threshold int
	// Budget is the most bytes shown, counted as a model sees each tool:
	// its name, description and input schema as compact JSON.
	Budget int
}

// Catalog is every tool a worker holding a set of grants may call, in
// name order, and the ones its tools/list shows: all of them, or, past
// its limits, find_tools and as much of the compact core as the budget
// holds. Each kind of tool is one source of offers (Builtins, Skills),
// so another kind — an outside server's tools — is one more source, and
// find_tools searches it too. A catalog depends only on what it was
// built from, so one is shared by every worker holding the same grants.
type Catalog struct {
	offers    []Offer
	shown     []*mcp.Tool
	searching bool
	index     *toolIndex
}

// NewCatalog puts sources of offers together and picks what is shown
// within lim.
func NewCatalog(lim Limits, sources ...[]Offer) *Catalog {
	c := &Catalog{offers: slices.Concat(sources...)}
	slices.SortFunc(c.offers, func(a, b Offer) int { return cmp.Compare(a.Def.Name, b.Def.Name) })
	size := 0
	for _, o := range c.offers {
		size += ShownBytes(o.Def)
	}
	c.index = newToolIndex(c.offers)
	c.searching = lim.Threshold > 0 && len(c.offers) > lim.Threshold || lim.Budget > 0 && size > lim.Budget
	if !c.searching {
		c.shown = c.Tools()
		return c
	}
	find := FindTools().def()
	c.shown = append(c.shown, find)
	room := lim.Budget - ShownBytes(find)
	core := slices.DeleteFunc(slices.Clone(c.offers), func(o Offer) bool { return o.Core == 0 })
	slices.SortFunc(core, func(a, b Offer) int { return cmp.Compare(a.Core, b.Core) })
	for _, o := range core {
		if n := ShownBytes(o.Def); lim.Budget == 0 || n <= room {
			c.shown = append(c.shown, o.Def)
			room -= n
		}
	}
	slices.SortFunc(c.shown, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	return c
}

// Tools are every tool of the catalog, in name order.
func (c *Catalog) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, len(c.offers))
	for i, o := range c.offers {
		out[i] = o.Def
	}
	return out
}

// Shown are the tools tools/list shows, in name order.
func (c *Catalog) Shown() []*mcp.Tool { return c.shown }

// Searching reports whether the catalog is past its limits: tools/list
// shows the core and find_tools finds the rest.
func (c *Catalog) Searching() bool { return c.searching }

// Find returns the catalog's tools that best match query, at most limit.
func (c *Catalog) Find(query string, limit int) []*mcp.Tool { return c.index.find(query, limit) }

// ShownBytes is what a tool costs a model: its name, description and
// input schema as compact JSON, as an agent sends them with every call.
func ShownBytes(t *mcp.Tool) int {
	b, err := json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
	}{t.Name, t.Description, t.InputSchema})
	if err != nil { // a schema that does not marshal is refused when a tool is made
		return len(t.Name) + len(t.Description)
	}
	return len(b)
}

// Builtins offers the built-in tools among granted, with the transport
// kinds ts in their schemas.
func Builtins(ts *domain.Transports, granted []string) []Offer {
	var out []Offer
	for _, t := range All() {
		if slices.Contains(granted, t.Name) {
			out = append(out, Offer{Def: t.Def(ts), Core: t.core})
		}
	}
	return out
}

// Skills offers skill_<name> for each callable skill among granted.
func Skills(skills []domain.Skill, granted []string) []Offer {
	var out []Offer
	for _, sk := range skills {
		if servable(sk, granted) {
			out = append(out, Offer{Def: skillDef(sk)})
		}
	}
	return out
}

// Config keys of the limits on what a tools/list shows.
var (
	SearchThresholdSetting = domain.SettingSpec{Key: "tools.search_threshold", Type: domain.SettingInt, Default: "20",
		Description: "A worker granted more tools than this is shown a compact core and find_tools instead of every tool; 0 for no limit.",
		Validate:    nonNegative("tools.search_threshold")}
	ContextBudgetSetting = domain.SettingSpec{Key: "tools.context_budget", Type: domain.SettingInt, Default: "8192",
		Description: "Most bytes of tool definitions (name, description, input schema as JSON) a worker's tools/list shows; " +
			"past it the worker is shown find_tools and as much of the core as fits. 0 for no limit.",
		Validate: nonNegative("tools.context_budget")}
)

// LimitsOf reads the limits from the store's settings.
func LimitsOf(ctx context.Context, st *store.Store) Limits {
	return Limits{Threshold: int(st.IntSetting(ctx, SearchThresholdSetting)), Budget: int(st.IntSetting(ctx, ContextBudgetSetting))}
}

func nonNegative(key string) func(string) error {
	return func(v string) error {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return domain.Invalid(key, "must be a whole number, 0 or more; got %q", v)
		}
		return nil
	}
}

package tools

import (
	"cmp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// Offer is one tool a worker may call, as a client is shown it.
type Offer struct {
	Def *mcp.Tool
}

// Catalog is every tool a worker holding a set of grants may call, in
// name order, as tools/list answers in the go-sdk: built-in tools and
// skills today, each kind of tool one source of offers (Builtins,
// Skills), so another kind — an outside server's tools — is one more
// source. A catalog depends only on what it was built from, so one is
// shared by every worker holding the same grants.
type Catalog struct {
	offers []Offer
}

// NewCatalog puts sources of offers together, in name order.
func NewCatalog(sources ...[]Offer) *Catalog {
	c := &Catalog{offers: slices.Concat(sources...)}
	slices.SortFunc(c.offers, func(a, b Offer) int { return cmp.Compare(a.Def.Name, b.Def.Name) })
	return c
}

// Tools are the catalog's definitions, in name order.
func (c *Catalog) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, len(c.offers))
	for i, o := range c.offers {
		out[i] = o.Def
	}
	return out
}

// Builtins offers the built-in tools among granted, with the transport
// kinds ts in their schemas.
func Builtins(ts *domain.Transports, granted []string) []Offer {
	var out []Offer
	for _, t := range All() {
		if slices.Contains(granted, t.Name) {
			out = append(out, Offer{Def: t.Def(ts)})
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

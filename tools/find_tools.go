package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// maxFound bounds one find_tools answer, so a search stays within a
// run's budget too.
const maxFound = 20

type findToolsIn struct {
	Query string `json:"query" jsonschema:"words of what you want to do, e.g. hire a worker or cancel a run; matched against tool names and descriptions"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many tools; 1 to 20, by default 5"`
}

type foundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type findToolsOut struct {
	Tools []foundTool `json:"tools" jsonschema:"the best matches first; call any of them as it is named"`
}

// errNoSearch answers find_tools where the catalog is shown whole.
var errNoSearch = errors.New("find_tools: every tool you hold is in tools/list already")

// FindTools is the tool a worker whose grants are too many to show whole
// (Catalog) is shown beside the core: it is not granted but given with
// the catalog it searches, which holds only the worker's granted tools.
var FindTools = sync.OnceValue(func() Tool {
	return define("find_tools", "Find more of your tools: you hold more than are listed. Returns the best matches for what you want to do, "+
		"with their input schemas; call them like any listed tool.",
		func(ctx context.Context, env *Env, in findToolsIn) (findToolsOut, error) {
			if env.Catalog == nil || !env.Catalog.Searching() {
				return findToolsOut{}, errNoSearch
			}
			if in.Limit == 0 {
				in.Limit = 5
			}
			if in.Limit < 0 || in.Limit > maxFound {
				return findToolsOut{}, domain.Invalid("limit", "must be between 1 and %d; got %d", maxFound, in.Limit)
			}
			if len(toolTerms(in.Query)) == 0 {
				return findToolsOut{}, domain.Invalid("query", "has no words to search for (one-letter words and words like \"the\" are skipped); got %q", in.Query)
			}
			out := findToolsOut{Tools: []foundTool{}}
			for _, t := range env.Catalog.Find(in.Query, in.Limit) {
				schema, err := json.Marshal(t.InputSchema)
				if err != nil {
					return findToolsOut{}, err
				}
				out.Tools = append(out.Tools, foundTool{Name: t.Name, Description: t.Description, InputSchema: schema})
			}
			return out, nil
		}).annotated("Find tools", readOnly|idempotent)
})

package tools

import (
	"cmp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// toolIndex ranks a catalog's tools by BM25 (domain.BM25, as recall
// ranks insights) summed over three fields — name, title, description —
// so a word of what a worker wants finds the tool that does it. Terms are
// counted once per field (domain.Terms drops repeats): the fields are a
// line or two.
type toolIndex struct {
	tools  []*mcp.Tool
	fields [][][]string // fields[doc][field] are its terms
	stats  domain.CorpusStats
}

const indexFields = 3 // name, title, description

func newToolIndex(offers []Offer) *toolIndex {
	x := &toolIndex{stats: domain.CorpusStats{Docs: len(offers), AvgLen: make([]float64, indexFields)}}
	for _, o := range offers {
		doc := [][]string{toolTerms(strings.ReplaceAll(o.Def.Name, "_", " ")), toolTerms(o.Def.Title), toolTerms(o.Def.Description)}
		x.tools, x.fields = append(x.tools, o.Def), append(x.fields, doc)
		for f, terms := range doc {
			x.stats.AvgLen[f] += float64(len(terms)) / float64(max(1, len(offers)))
		}
	}
	return x
}

// find returns the tools matching query's terms, best first, at most
// limit; a query that is a tool's name finds that tool first.
func (x *toolIndex) find(query string, limit int) []*mcp.Tool {
	terms := toolTerms(query)
	stats := x.stats // a catalog is shared: the counts of a query are its own
	stats.DF = make([][]int, len(terms))
	hits := make([]domain.FieldHits, len(x.tools))
	for t, term := range terms {
		stats.DF[t] = make([]int, indexFields)
		for d, doc := range x.fields {
			if t == 0 {
				hits[d] = domain.FieldHits{Len: make([]int, indexFields), TF: make([][]int, len(terms))}
			}
			hits[d].TF[t] = make([]int, indexFields)
			for f, words := range doc {
				hits[d].Len[f] = len(words)
				n := countOf(words, term)
				hits[d].TF[t][f] = n
				if n > 0 {
					stats.DF[t][f]++
				}
			}
		}
	}
	type scored struct {
		tool  *mcp.Tool
		score float64
	}
	var found []scored
	for d, tool := range x.tools {
		score := 0.0
		if len(terms) > 0 {
			score = domain.BM25(stats, hits[d])
		}
		if tool.Name == strings.TrimSpace(query) {
			score += 1e6
		}
		if score > 0 {
			found = append(found, scored{tool, score})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	var out []*mcp.Tool
	for _, s := range found[:min(limit, len(found))] {
		out = append(out, s.tool)
	}
	return out
}

// toolTerms are text's words as domain.Terms gives them, each without a
// plural's s, so "roles" finds list_roles and "stream" finds streams.
func toolTerms(text string) []string {
	terms := domain.Terms(text)
	for i, t := range terms {
		if len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") {
			terms[i] = t[:len(t)-1]
		}
	}
	return terms
}

func countOf(words []string, term string) int {
	n := 0
	for _, w := range words {
		if w == term {
			n++
		}
	}
	return n
}

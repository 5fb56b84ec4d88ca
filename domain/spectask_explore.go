package domain

import (
	"cmp"
	"slices"
	"strings"
)

// A spec task on an existing repository starts with an explore phase:
// the repository's tracked files are grouped into areas (top-level
// directories, and the files at the root as "."), the areas split among
// the explorers, and each explorer reports what its partition holds and
// which areas it read and which it could not. The planner is woken with
// the whole exploration once every partition is in. A repository with no
// files skips the phase.

// RootArea is the area of the files at a repository's root.
const RootArea = "."

// Bounds of an exploration: partitions, areas listed per partition, and
// the tool calls an explorer is asked to stay within.
const (
	MaxExplorers         = 8
	maxAreasPerPartition = 200
	DefaultExploreBudget = 20
)

// ExploreState is where one partition of an exploration is.
type ExploreState string

const (
	ExploreOpen       ExploreState = "open"       // handed to its explorer, no report yet
	ExploreReported   ExploreState = "reported"   // the explorer reported
	ExploreUnreported ExploreState = "unreported" // its run ended without a report: every area unknown
)

// ExplorePart is one explorer's share of a repository and what it found.
type ExplorePart struct {
	Part     int          `json:"part"`
	Worker   string       `json:"worker"`
	Areas    []string     `json:"areas"`
	Files    int          `json:"files"`
	Budget   int          `json:"budget"`
	State    ExploreState `json:"state"`
	Summary  string       `json:"summary,omitempty"`
	Read     []string     `json:"read,omitempty"`
	Unknown  []string     `json:"unknown,omitempty"`
	Coverage float64      `json:"coverage"`
}

// Area is the area a tracked path belongs to.
func Area(path string) string {
	if i := strings.IndexByte(path, '/'); i > 0 {
		return path[:i]
	}
	return RootArea
}

// PartitionRepo splits a repository's tracked files among explorers: one
// partition per explorer at most, never more than there are areas, the
// largest areas placed first on the least loaded partition, so the work is
// even and the same files always split the same way. No files: none.
func PartitionRepo(files []string, explorers []string, budget int) []ExplorePart {
	count := map[string]int{}
	for _, f := range files {
		if f = strings.TrimSpace(f); f != "" {
			count[Area(f)]++
		}
	}
	areas := make([]string, 0, len(count))
	for a := range count {
		areas = append(areas, a)
	}
	slices.SortFunc(areas, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	n := min(len(explorers), len(areas), MaxExplorers)
	parts := make([]ExplorePart, n)
	for i := range parts {
		parts[i] = ExplorePart{Part: i + 1, Worker: explorers[i], Budget: budget, State: ExploreOpen}
	}
	for _, a := range areas {
		p := &parts[0]
		for i := range parts {
			if parts[i].Files < p.Files {
				p = &parts[i]
			}
		}
		if len(p.Areas) < maxAreasPerPartition {
			p.Areas = append(p.Areas, a)
		}
		p.Files += count[a]
	}
	for i := range parts {
		slices.Sort(parts[i].Areas)
	}
	return parts
}

// Cover records an explorer's report on its partition: the areas it says
// it read, named as handed out (only its own count), and as unknown every
// other area of it, so silence is never taken for coverage.
func (p *ExplorePart) Cover(summary string, read []string) {
	p.State, p.Summary, p.Read, p.Unknown = ExploreReported, summary, nil, nil
	said := map[string]bool{}
	for _, r := range read {
		if r = strings.Trim(strings.TrimSpace(r), "/"); r == "" {
			r = RootArea
		}
		said[r] = true
	}
	for _, a := range p.Areas {
		if said[a] {
			p.Read = append(p.Read, a)
		} else {
			p.Unknown = append(p.Unknown, a)
		}
	}
	p.Coverage = 0
	if len(p.Areas) > 0 {
		p.Coverage = float64(len(p.Read)) / float64(len(p.Areas))
	}
}

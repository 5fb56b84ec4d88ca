package domain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ItemState is where one item of a task's graph is.
type ItemState string

// The item states and their checklist marks in progress.md.
const (
	ItemPending    ItemState = "pending"     // - [ ]
	ItemInProgress ItemState = "in_progress" // - [~]
	ItemDone       ItemState = "done"        // - [x]
	ItemBlocked    ItemState = "blocked"     // - [!]
	// ItemSkipped is a stalled item the planner (or reviewer) chose to do
	// without, with a reason; what waited for it goes on.
	ItemSkipped ItemState = "skipped" // - [-]
)

var itemMarks = map[ItemState]string{ItemPending: " ", ItemInProgress: "~", ItemDone: "x", ItemBlocked: "!", ItemSkipped: "-"}

// Settled says nothing more will be done on an item: done or skipped.
func (s ItemState) Settled() bool { return s == ItemDone || s == ItemSkipped }

// ItemOutcome is what a builder reports for its item.
type ItemOutcome string

// The outcomes report_item accepts.
const (
	OutcomeDelivered ItemOutcome = "delivered"
	OutcomePartial   ItemOutcome = "partial"
	OutcomeBlocked   ItemOutcome = "blocked"
)

// ItemOutcomes lists the outcomes, for enums and errors.
var ItemOutcomes = []ItemOutcome{OutcomeDelivered, OutcomePartial, OutcomeBlocked}

// TaskItem is one step of a task's implementation, numbered within the task.
type TaskItem struct {
	Seq         int      `json:"seq"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Files       []string `json:"files,omitempty"`
	Verify      string   `json:"verify,omitempty"`
	// Delta is what the item changes in what exists (the exploration's
	// findings); Framework and Idioms are what it builds with and the
	// conventions to keep; Budget is the most tool calls it should take.
	Delta     string    `json:"delta,omitempty"`
	Framework string    `json:"framework,omitempty"`
	Idioms    []string  `json:"idioms,omitempty"`
	Budget    int       `json:"budget,omitempty"`
	BlockedBy []int     `json:"blockedBy,omitempty"`
	State     ItemState `json:"state"`
	Worker    string    `json:"worker,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	// Handouts counts how often the item was given to a builder; a run
	// that ends without a report gets it once more, then it is blocked.
	Handouts int `json:"handouts"`
	// Replans counts how often the planner was asked to plan around it.
	Replans    int        `json:"replans,omitempty"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// PullRequest is the one the server opened for the item, if any.
	PullRequest *ItemPullRequest `json:"pullRequest,omitempty"`
}

// Bounds of an item's plan fields.
const (
	MaxItemBudget = 1000
	maxIdioms     = 16
)

// CheckItems refuses a graph that cannot be worked: items without a title,
// duplicate numbers, blockers that do not exist, and cycles, naming the
// cycle ("items form a cycle: 1 → 3 → 1").
func CheckItems(items []TaskItem) error {
	bySeq := map[int]TaskItem{}
	for i, it := range items {
		field := fmt.Sprintf("items[%d]", i)
		switch {
		case it.Seq < 1:
			return Invalid(field+".seq", "must be 1 or more, got %d", it.Seq)
		case strings.TrimSpace(it.Title) == "":
			return Required(field + ".title")
		case it.Budget < 0 || it.Budget > MaxItemBudget:
			return Invalid(field+".budget", "is the most tool calls the item should take, 1 to %d (0: no budget); got %d", MaxItemBudget, it.Budget)
		case len(it.Idioms) > maxIdioms:
			return Invalid(field+".idioms", "at most %d idioms; got %d", maxIdioms, len(it.Idioms))
		}
		if _, dup := bySeq[it.Seq]; dup {
			return Invalid(field+".seq", "item %d appears twice", it.Seq)
		}
		bySeq[it.Seq] = it
	}
	for i, it := range items {
		for _, b := range it.BlockedBy {
			if _, ok := bySeq[b]; !ok {
				return Invalid(fmt.Sprintf("items[%d].blockedBy", i), "item %d is blocked by item %d, which does not exist", it.Seq, b)
			}
		}
	}
	if cycle := findCycle(items, bySeq); cycle != nil {
		names := make([]string, len(cycle))
		for i, s := range cycle {
			names[i] = strconv.Itoa(s)
		}
		return Invalid("items", "items form a cycle: %s", strings.Join(names, " → "))
	}
	return nil
}

// findCycle returns one cycle as the path that closes it, or nil.
func findCycle(items []TaskItem, bySeq map[int]TaskItem) []int {
	const (
		unseen = iota
		onPath
		finished
	)
	mark := map[int]int{}
	var path []int
	var visit func(seq int) []int
	visit = func(seq int) []int {
		mark[seq] = onPath
		path = append(path, seq)
		for _, b := range bySeq[seq].BlockedBy {
			switch mark[b] {
			case onPath:
				start := slices.Index(path, b)
				return append(slices.Clone(path[start:]), b)
			case unseen:
				if c := visit(b); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[seq] = finished
		return nil
	}
	for _, it := range items {
		if mark[it.Seq] == unseen {
			if c := visit(it.Seq); c != nil {
				return c
			}
		}
	}
	return nil
}

// ReadyItems are the pending items whose blockers are all done, lowest
// number first.
func ReadyItems(items []TaskItem) []TaskItem {
	done := map[int]bool{}
	for _, it := range items {
		done[it.Seq] = it.State.Settled()
	}
	var out []TaskItem
	for _, it := range items {
		if it.State == ItemPending && !slices.ContainsFunc(it.BlockedBy, func(b int) bool { return !done[b] }) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b TaskItem) int { return a.Seq - b.Seq })
	return out
}

// Progress counts the items done out of all.
func Progress(items []TaskItem) (done, total int) {
	for _, it := range items {
		if it.State == ItemDone {
			done++
		}
	}
	return done, len(items)
}

// RenderChecklist writes progress.md: one checkbox line per item, then its
// details indented below it, which ParseChecklist skips.
func RenderChecklist(title string, items []TaskItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Progress: %s\n\n", title)
	for _, it := range items {
		fmt.Fprintf(&b, "- [%s] %d. %s", itemMarks[it.State], it.Seq, it.Title)
		if len(it.BlockedBy) > 0 {
			after := make([]string, len(it.BlockedBy))
			for i, s := range it.BlockedBy {
				after[i] = strconv.Itoa(s)
			}
			fmt.Fprintf(&b, " (after %s)", strings.Join(after, ", "))
		}
		if it.Worker != "" {
			fmt.Fprintf(&b, " @%s", it.Worker)
		}
		b.WriteByte('\n')
		budget := ""
		if it.Budget > 0 {
			budget = fmt.Sprintf("%d tool calls", it.Budget)
		}
		for _, d := range []struct{ k, v string }{{"", it.Description}, {"delta: ", it.Delta}, {"files: ", strings.Join(it.Files, ", ")},
			{"framework: ", it.Framework}, {"idioms: ", strings.Join(it.Idioms, "; ")}, {"budget: ", budget},
			{"verify: ", it.Verify}, {"result: ", it.Summary}} {
			if v := strings.TrimSpace(d.v); v != "" {
				fmt.Fprintf(&b, "  %s%s\n", d.k, strings.ReplaceAll(v, "\n", "\n  "))
			}
		}
	}
	return b.String()
}

// ChecklistLine is one parsed checkbox of progress.md.
type ChecklistLine struct {
	Seq   int
	State ItemState
	Title string
}

var checklistLine = LazyRegexp(`^- \[([ ~xX!-])\] (\d+)\. (.*?)(?: \(after [0-9, ]+\))?(?: @(w-[a-z0-9-]+))?\s*$`)

// ParseChecklist reads the checkbox lines of progress.md. A line that
// looks like a checkbox but cannot be read is an error naming its line,
// so an agent's edit is never silently ignored.
func ParseChecklist(md string) ([]ChecklistLine, error) {
	var out []ChecklistLine
	for n, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "- [") {
			continue
		}
		m := checklistLine().FindStringSubmatch(line)
		if m == nil {
			return nil, Invalid("progress", "line %d %q is not \"- [ ] N. title\" with one of the marks \" \", \"~\", \"x\", \"!\", \"-\"", n+1, line)
		}
		seq, _ := strconv.Atoi(m[2])
		state := ItemDone
		for s, mark := range itemMarks {
			if mark == strings.ToLower(m[1]) {
				state = s
			}
		}
		out = append(out, ChecklistLine{Seq: seq, State: state, Title: m[3]})
	}
	return out, nil
}

// ApplyChecklist takes the marks an agent committed in progress.md into
// the items: an item may be marked done or blocked, never moved back or
// handed out (the server alone hands items out). It returns the items
// that changed.
func ApplyChecklist(items []TaskItem, lines []ChecklistLine) []TaskItem {
	marks := map[int]ItemState{}
	for _, l := range lines {
		marks[l.Seq] = l.State
	}
	var changed []TaskItem
	for _, it := range items {
		m, ok := marks[it.Seq]
		if !ok || m == it.State || it.State.Settled() || (m != ItemDone && m != ItemBlocked) {
			continue
		}
		it.State = m
		changed = append(changed, it)
	}
	return changed
}

// FleetEntry is what one builder is doing on a task right now: its item,
// the numbers of the items just before and after it in the checklist (0
// for none) and how long it has been at it.
type FleetEntry struct {
	Worker  string `json:"worker"`
	Item    int    `json:"item"`
	Title   string `json:"title"`
	Before  int    `json:"before,omitempty"`
	After   int    `json:"after,omitempty"`
	Elapsed string `json:"elapsed"`
}

// Fleet lists each item in progress, as of now.
func Fleet(items []TaskItem, now time.Time) []FleetEntry {
	var out []FleetEntry
	for i, it := range items {
		if it.State != ItemInProgress {
			continue
		}
		e := FleetEntry{Worker: it.Worker, Item: it.Seq, Title: it.Title}
		if i > 0 {
			e.Before = items[i-1].Seq
		}
		if i+1 < len(items) {
			e.After = items[i+1].Seq
		}
		if it.StartedAt != nil {
			e.Elapsed = now.Sub(*it.StartedAt).Round(time.Second).String()
		}
		out = append(out, e)
	}
	return out
}

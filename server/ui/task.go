package ui

import (
	"net/http"
	"slices"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type taskPage struct {
	store.SpecTaskView
	Done, Total int
	Board       []boardColumn
	// Review says what the reviewer is asked to decide now ("the spec",
	// "the finished work", "the blocked task"); empty when nothing.
	Review string
	// CanReview: the viewer is the reviewer and holds review_spec.
	CanReview bool
	CanCancel bool
	// Names are the workers' names by id, as list_workers shows them.
	Names map[string]string
	// Stream is the task's stream, where every move of it is told.
	Stream string
	// DesignFirst: while the spec is written and reviewed the design is
	// what matters, and it comes before the board.
	DesignFirst bool
}

// boardColumn is one column of a task's board: the items in one state.
type boardColumn struct {
	State domain.ItemState
	Title string
	Cards []boardCard
}

// boardCard is an item on the board; a pending item is Ready when every
// item it waits for is done.
type boardCard struct {
	domain.TaskItem
	Ready bool
}

// boardStates are the board's columns, in the order work moves.
var boardStates = []struct {
	State domain.ItemState
	Title string
}{{domain.ItemPending, "To do"}, {domain.ItemInProgress, "In progress"}, {domain.ItemBlocked, "Blocked"}, {domain.ItemDone, "Done"}, {domain.ItemSkipped, "Skipped"}}

// reviewAsks maps the states a reviewer decides in to what they decide.
var reviewAsks = map[domain.TaskState]string{domain.TaskSpecReview: "the spec", domain.TaskImplementationReview: "the finished work", domain.TaskBlocked: "the blocked task"}

// handleTask shows one spec task: its documents, the review the reviewer
// owes, and its items as a board of who works on what, live.
func (u *UI) handleTask(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	id := r.PathValue("id")
	live := u.liveURL(ctx, "view", "task", "task", id)
	view, err := invoke[store.SpecTaskView](ctx, v, "get_spec_task", map[string]any{"task": id})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	p := taskPage{SpecTaskView: view, Board: board(view.Items), Names: map[string]string{}, Stream: domain.TaskStream(view.Task.ID),
		Review: reviewAsks[view.Task.State], CanCancel: v.Can("cancel_spec_task") && !view.Task.State.Final()}
	p.Done, p.Total = domain.Progress(view.Items)
	p.DesignFirst = slices.Contains([]domain.TaskState{domain.TaskBacklog, domain.TaskExploration, domain.TaskSpecGeneration, domain.TaskSpecReview, domain.TaskSpecRevision}, view.Task.State)
	p.CanReview = p.Review != "" && v.Can("review_spec") && view.Task.Reviewer == v.Worker.ID
	if all, err := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", nil); err == nil {
		for _, wk := range all.Workers {
			p.Names[wk.ID] = wk.Name
		}
	}
	u.render(w, r, http.StatusOK, "task", pageData{Title: view.Task.Title, Nav: "tasks", V: v, Live: live, Body: p})
}

// board sorts a task's items into its columns, each in item order.
func board(items []domain.TaskItem) []boardColumn {
	ready := domain.ReadyItems(items)
	cols := make([]boardColumn, len(boardStates))
	for i, s := range boardStates {
		cols[i] = boardColumn{State: s.State, Title: s.Title}
		for _, it := range items {
			if it.State == s.State {
				isReady := slices.ContainsFunc(ready, func(r domain.TaskItem) bool { return r.Seq == it.Seq })
				cols[i].Cards = append(cols[i].Cards, boardCard{TaskItem: it, Ready: isReady})
			}
		}
	}
	// Skipped items are rare: their column shows only when there are some.
	if last := cols[len(cols)-1]; last.State == domain.ItemSkipped && len(last.Cards) == 0 {
		cols = cols[:len(cols)-1]
	}
	return cols
}
